#include "model/admission_step.h"

#include <algorithm>
#include <optional>

namespace sharebuf::model {

using buffer::DropReason;
using policies::Action;

buffer::BufferView ingress_view(policies::Policy& policy, buffer::SharedBuffer& buffer,
                                uint64_t now_ns) noexcept {
  buffer.advance_probes(now_ns);
  if (policy.uses_probes()) {
    buffer.probes().deliver(
        now_ns, [&](const buffer::Occupancy& regs, uint64_t boundary_ns, uint64_t interval_ns) {
          policy.on_probe(buffer::BufferView(regs, buffer.layout()), boundary_ns, interval_ns);
        });
  }
  return buffer.view(now_ns);
}

namespace {

// Policy::reclaim()'s drop_head: the buffer's own head drop.
struct Reclaimer {
  buffer::SharedBuffer& buffer;
  buffer::CellCache& cache;
  buffer::EvictedFrames* evicted;
  uint32_t cells = 0;

  static policies::Policy::HeadDrop drop_head(void* self, uint32_t queue) noexcept {
    auto& r = *static_cast<Reclaimer*>(self);
    if (queue >= r.buffer.layout().num_queues()) return {};
    policies::Policy::HeadDrop d;
    d.cells = r.buffer.reclaim_head(r.cache, queue, r.evicted, &d.bytes);
    if (d.cells == 0) d.bytes = 0;
    r.cells += d.cells;
    return d;
  }
};

}  // namespace

AdmissionOutcome admit_frame(policies::Policy& policy, buffer::SharedBuffer& buffer,
                             buffer::CellCache& cache, const buffer::BufferView& view,
                             const policies::ArrivalContext& ctx, std::span<const std::byte> frame,
                             const buffer::FrameMeta& meta, buffer::EvictedFrames* evicted,
                             const RefusalHook* on_refused) noexcept {
  AdmissionOutcome out;
  if (policy.reclaims()) {
    Reclaimer r{buffer, cache, evicted};
    policy.reclaim(ctx.now_ns, buffer.exact_view(), &Reclaimer::drop_head, &r);
    out.reclaimed_cells = r.cells;
  }
  const policies::Verdict verdict = policy.admit(ctx, view);
  // IB's DPP may name another queue of the same port; the arrival is counted and queued there.
  std::optional<policies::ArrivalContext> moved;  // built only for kAcceptInto
  const policies::ArrivalContext* arrival = &ctx;
  bool bad_target = false;
  if (verdict.action == Action::kAcceptInto) {
    const buffer::BufferLayout& layout = buffer.layout();
    if (verdict.victim_queue < layout.num_queues() &&
        layout.port_of(verdict.victim_queue) == layout.port_of(ctx.queue)) {
      moved.emplace(ctx);
      moved->queue = verdict.victim_queue;
      arrival = &*moved;
    } else {
      bad_target = true;
    }
  }
  const policies::ArrivalContext& a = *arrival;
  out.queue = a.queue;
  // A refusal for lack of room, unless the hook makes room the frame then takes.
  auto refuse = [&](DropReason reason) {
    if (on_refused != nullptr &&
        (reason == DropReason::kThreshold || reason == DropReason::kPoolFull) &&
        on_refused->make_room(on_refused->self, a) && buffer.enqueue(cache, a.queue, frame, meta)) {
      out.enqueued = out.made_room = true;
      policy.on_enqueue(a, view);
      return;
    }
    out.reason = reason;
    buffer.count_drop(a.queue, reason, a.cells);
  };
  buffer.count_arrival(a.queue);
  // Telemetry shows the threshold of the latest arrival's class; stored only when it changes, so
  // a queue that carries one class pays a load per frame.
  auto& last_class = buffer.stats(a.queue).last_class;
  if (last_class.load(std::memory_order_relaxed) != a.class_id)
    last_class.store(a.class_id, std::memory_order_relaxed);
  switch (verdict.action) {
    case Action::kAccept:
      break;
    case Action::kAcceptInto:
      if (bad_target) {
        refuse(DropReason::kUnsupported);
        return out;
      }
      break;
    case Action::kPushOut: {
      // LQD: plan the push-outs, carry them out and keep the cells for this frame, atomically
      // (buffer/shared_buffer.h); a refused plan pushes nothing out.
      const policies::Policy::VictimPicker pick = policy.victim_picker();
      if (pick == nullptr) {
        refuse(DropReason::kUnsupported);
        return out;
      }
      const buffer::SharedBuffer::RoomMade room =
          buffer.make_room(cache, ctx.queue, ctx.cells, verdict.from_head, pick, evicted);
      out.pushed_out_cells = room.pushed_out_cells;
      out.waited_out = room.waited_out;
      if (!room.reserved) {
        out.reason = DropReason::kPoolFull;
        buffer.count_drop(ctx.queue, out.reason, ctx.cells);
        return out;
      }
      buffer.enqueue_reserved(cache, ctx.queue, frame, meta);
      out.enqueued = true;
      policy.on_enqueue(ctx, view);
      return out;
    }
    case Action::kDrop:
    case Action::kTrim:
      refuse(verdict.reason == DropReason::kNone ? DropReason::kUnsupported : verdict.reason);
      return out;
  }
  if (!buffer.enqueue(cache, a.queue, frame, meta)) {
    refuse(DropReason::kPoolFull);
    return out;
  }
  out.enqueued = true;
  policy.on_enqueue(a, view);
  return out;
}

size_t cut_copy(std::span<const uint8_t> frame, const ParsedFrame& parsed,
                const TrimOptions& options, const buffer::FrameMeta& meta,
                std::span<uint8_t> scratch, bool return_to_sender) noexcept {
  // A trimmed copy is never trimmed again: refused at the trim queue, it is dropped.
  if ((meta.flags & buffer::kFlagTrimmed) != 0 || scratch.size() < frame.size()) return 0;
  std::copy(frame.begin(), frame.end(), scratch.begin());
  const size_t n = trim_frame(scratch.first(frame.size()), parsed, options);
  if (n != 0 && return_to_sender) swap_addresses(scratch.first(n), parsed);
  return n;
}

AdmissionOutcome admit_cut_copy(policies::Policy& policy, buffer::SharedBuffer& buffer,
                                buffer::CellCache& cache, const buffer::BufferView& view,
                                const policies::ArrivalContext& from, std::span<const uint8_t> cut,
                                uint32_t trim_queue, buffer::FrameMeta meta,
                                bool return_to_sender) noexcept {
  auto& counter = return_to_sender ? buffer.stats(from.queue).bounced_pkts
                                   : buffer.stats(from.queue).trimmed_pkts;
  counter.fetch_add(1, std::memory_order_relaxed);
  policies::ArrivalContext ctx = from;
  ctx.queue = trim_queue;
  ctx.port = static_cast<uint16_t>(buffer.layout().port_of(trim_queue));
  ctx.bytes = static_cast<uint32_t>(cut.size());
  ctx.cells = buffer.layout().cells_for(ctx.bytes);
  meta.flags |= buffer::kFlagTrimmed;
  // The port's header reserve first (NDP's header queue: no verdict, no contention with data);
  // when it is full, the shared buffer under the policy like any arrival.
  if (buffer.enqueue_header(cache, trim_queue, std::as_bytes(cut), meta)) {
    buffer.count_arrival(trim_queue);
    buffer.stats(trim_queue).header_reserve_pkts.fetch_add(1, std::memory_order_relaxed);
    policy.on_enqueue(ctx, view);
    return {.enqueued = true};
  }
  AdmissionOutcome out = admit_frame(policy, buffer, cache, view, ctx, std::as_bytes(cut), meta);
  if (!out.enqueued)
    buffer.stats(trim_queue).trimmed_dropped_pkts.fetch_add(1, std::memory_order_relaxed);
  return out;
}

AdmissionOutcome admit_trimmed(policies::Policy& policy, buffer::SharedBuffer& buffer,
                               buffer::CellCache& cache, const buffer::BufferView& view,
                               const policies::ArrivalContext& from, std::span<const uint8_t> frame,
                               const ParsedFrame& parsed, const TrimOptions& options,
                               uint32_t trim_queue, const buffer::FrameMeta& meta,
                               std::span<uint8_t> scratch, bool return_to_sender) noexcept {
  const size_t n = cut_copy(frame, parsed, options, meta, scratch, return_to_sender);
  if (n == 0) return {};
  return admit_cut_copy(policy, buffer, cache, view, from, scratch.first(n), trim_queue, meta,
                        return_to_sender);
}

}  // namespace sharebuf::model

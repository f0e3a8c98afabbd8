#include "model/overflow_step.h"

#include <algorithm>

namespace sharebuf::model {

void configure_tofino(TofinoApprox& tofino, const SwitchConfig& config) {
  const TrimConfig& t = config.trim;
  tofino.settings.variant.store(static_cast<uint8_t>(t.meters));
  tofino.settings.burst_bytes.store(t.meter_burst_bytes);
  tofino.settings.pessimistic_share.store(t.pessimistic_share);
  tofino.settings.t0_ns.store(t.t0_ns);
  tofino.settings.t1_ns.store(t.t1_ns);
  tofino.settings.recirc_rate_bps.store(t.recirc_rate_bps);
  tofino.settings.recirc_queue_bytes.store(t.recirc_queue_bytes);
  tofino.settings.recirc_latency_ns.store(t.recirc_latency_ns);
}

OverflowStep::OverflowStep(buffer::SharedBuffer& buffer, const TrimSettings& trim,
                           TofinoApprox& tofino, bool header_full_return, bool synthetic,
                           uint64_t seed)
    : buffer_(buffer),
      trim_(trim),
      tofino_(tofino),
      header_full_return_(header_full_return),
      synthetic_(synthetic),
      rng_(seed != 0 ? seed : 1) {}

void OverflowStep::reserve(uint32_t max_frame) {
  scratch_.resize(std::max<size_t>(max_frame, 16384));
  evicted_.reserve(64 * (size_t{max_frame} + 4), 64);
}

OverflowStep::Result OverflowStep::admit(policies::Policy& policy, const buffer::BufferView& view,
                                         buffer::CellCache& cache,
                                         const policies::ArrivalContext& ctx, Frame frame,
                                         const buffer::FrameMeta& meta, uint32_t in_port,
                                         uint64_t meter_ns, Sink& sink) {
  Result r;
  AdmissionOutcome& outcome = r.outcome;
  const OverflowAction overflow = trim_.overflow_of(ctx.class_id);
  const uint32_t out_port = ctx.port;
  // Trimming's Tofino approximation: the ingress pipeline's meters may trim the frame before
  // the buffer sees it (counted as arrived and dropped for reason "meter").
  const bool tofino =
      overflow == OverflowAction::kTrim && trim_.tofino_approx.load(std::memory_order_relaxed);
  if (tofino && tofino_.meter(in_port, out_port, ctx.bytes, meter_ns)) {
    buffer_.count_arrival(ctx.queue);
    outcome.reason = buffer::DropReason::kMeter;
    buffer_.count_drop(ctx.queue, outcome.reason, ctx.cells);
  } else {
    // NDP's trim_newest, on the real verdict: a refused arrival of a trimming class may take the
    // place of its queue's newest frame, which is trimmed instead (trim_newest_instead). Not
    // under the Tofino approximation: its ingress cannot reach the traffic manager's queues.
    const bool newest = overflow == OverflowAction::kTrim && !tofino &&
                        trim_.trim_newest_p16.load(std::memory_order_relaxed) != 0;
    const RefusalHook hook{&OverflowStep::trim_newest_instead, this};
    if (newest) current_ = {&policy, &view, &cache, &sink};  // only when it can be asked
    evicted_.clear();
    trimmed_upto_ = 0;
    outcome = admit_frame(policy, buffer_, cache, view, ctx,
                          std::span<const std::byte>(
                              reinterpret_cast<const std::byte*>(frame.bytes.data()), ctx.bytes),
                          meta, &evicted_, newest ? &hook : nullptr);
    if (outcome.enqueued) sink.enqueued(outcome.queue, false);
    // Frames LQD pushed out for this one get their class's overflow action too.
    if (trimmed_upto_ != evicted_.frames.size())
      trim_evicted(policy, view, cache, ctx.now_ns, sink);
  }
  if (!outcome.enqueued) {
    // The class's overflow action: trim sends the frame's headers on through the egress port's
    // trim queue, return-to-sender back out of the ingress port through its trim queue
    // (model/frame_trim.h); the copy is admitted there like any arrival. Under the Tofino
    // approximation a frame the meters passed and the buffer refused is deflected instead, and
    // trimmed as it leaves the recirculation port (release_deflected).
    if (overflow == OverflowAction::kDrop) return r;
    if (tofino && outcome.reason != buffer::DropReason::kMeter) {
      deflect(in_port, out_port, frame, ctx, meta);
      return r;
    }
    r.copy_enqueued = send_cut_copy(out_port, frame, ctx, meta, policy, view, cache,
                                    overflow == OverflowAction::kReturnToSender, sink);
  } else if (const uint32_t thr =
                 overflow == OverflowAction::kReturnToSender
                     ? trim_.return_threshold[ctx.class_id].load(std::memory_order_relaxed)
                     : 0;
             thr != 0 && buffer_.state().queue_cells(outcome.queue) > thr) {
    // SFC's early signal: above the threshold, a header copy goes back while the frame goes on.
    send_cut_copy(out_port, frame, ctx, meta, policy, view, cache, true, sink);
  }
  return r;
}

size_t OverflowStep::cut(Frame frame, const buffer::FrameMeta& meta, uint32_t via,
                         bool return_to_sender) {
  if (scratch_.size() < frame.bytes.size())
    scratch_.resize(std::max<size_t>(frame.bytes.size(), 16384));
  if (!synthetic_ && frame.parsed != nullptr)
    return cut_copy(frame.bytes, *frame.parsed, trim_options(via, return_to_sender), meta, scratch_,
                    return_to_sender);
  // Synthetic bytes: the copy is the frame's first trim_size bytes (a trimmed copy is never cut
  // again): what ns-3's switch keeps there, the handle of the packet it was cut from, stays.
  if ((meta.flags & buffer::kFlagTrimmed) != 0 || frame.bytes.empty()) return 0;
  const size_t n = std::min<size_t>(frame.bytes.size(), trim_.size.load(std::memory_order_relaxed));
  std::copy_n(frame.bytes.begin(), n, scratch_.begin());
  return n;
}

bool OverflowStep::send_cut_copy(uint32_t out_port, Frame frame,
                                 const policies::ArrivalContext& ctx, const buffer::FrameMeta& meta,
                                 policies::Policy& policy, const buffer::BufferView& view,
                                 buffer::CellCache& cache, bool return_to_sender, Sink& sink) {
  // A header this or another switch returned (its DSCP is the return mark) is not returned again.
  if (return_to_sender && frame.parsed != nullptr) {
    const int return_dscp = trim_.return_dscp.load(std::memory_order_relaxed);
    if (return_dscp >= 0 && frame.parsed->dscp == return_dscp) return false;
  }
  const uint32_t via = return_to_sender ? meta.in_port : out_port;
  const size_t n = cut(frame, meta, via, return_to_sender);
  if (n == 0) return false;  // nothing to cut (not IP, a fragment, a copy already)
  const uint32_t tq = trim_queue_of(via);
  const AdmissionOutcome out =
      admit_cut_copy(policy, buffer_, cache, view, ctx, std::span<const uint8_t>(scratch_).first(n),
                     tq, meta, return_to_sender);
  if (!out.enqueued) {
    // NDP: a header its queue cannot take (reserve full, then refused) goes back to its sender.
    if (return_to_sender || !header_full_return_) return false;
    return send_cut_copy(out_port, frame, ctx, meta, policy, view, cache, true, sink);
  }
  sink.enqueued(tq, true);
  return true;
}

TrimOptions OverflowStep::trim_options(uint32_t via, bool return_to_sender) const noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const int toward = trim_.dscp_toward[via].load(kRelaxed);
  const int dscp = return_to_sender ? trim_.return_dscp.load(kRelaxed)
                   : toward >= 0    ? toward
                                    : trim_.dscp.load(kRelaxed);
  return {.size = trim_.size.load(kRelaxed),
          .fix_lengths = trim_.fix_lengths.load(kRelaxed),
          .dscp = dscp};
}

uint32_t OverflowStep::trim_queue_of(uint32_t port) const noexcept {
  const buffer::BufferLayout& layout = buffer_.layout();
  return layout.queue_id(port, std::min(trim_.trim_queue[port].load(std::memory_order_relaxed),
                                        layout.queues_on_port(port) - 1));
}

void OverflowStep::deflect(uint32_t in_port, uint32_t out_port, Frame frame,
                           const policies::ArrivalContext& ctx, const buffer::FrameMeta& meta) {
  // Cut now (the copy that leaves the recirculation port is this one); the recirculation port
  // carries and times the full frame.
  const size_t n = cut(frame, meta, out_port, false);
  if (n == 0) return;
  TofinoApprox::Deflected d{.cut = std::vector<uint8_t>(scratch_.begin(), scratch_.begin() + n),
                            .from = ctx,
                            .meta = meta};
  if (tofino_.deflect(in_port, std::move(d), ctx.bytes, ctx.now_ns, buffer_.state()))
    buffer_.stats(ctx.queue).deflected_pkts.fetch_add(1, std::memory_order_relaxed);
}

bool OverflowStep::release_deflected(policies::Policy& policy, buffer::CellCache& cache,
                                     uint64_t now_ns, Sink& sink) {
  if (!tofino_.any_deflected()) return false;
  departed_.clear();
  tofino_.take_departed(now_ns, departed_, buffer_.state());
  if (!departed_.empty()) {
    const buffer::BufferView view = ingress_view(policy, buffer_, now_ns);
    policy.begin_burst();
    for (TofinoApprox::Deflected& d : departed_) {
      // Back in ingress from the recirculation port, trimmed: admitted to the trim queue now.
      d.from.now_ns = now_ns;
      const uint32_t tq = trim_queue_of(d.from.port);
      const AdmissionOutcome out =
          admit_cut_copy(policy, buffer_, cache, view, d.from, d.cut, tq, d.meta, false);
      if (out.enqueued) sink.enqueued(tq, true);
    }
    policy.end_burst();
  }
  return tofino_.any_deflected();
}

void OverflowStep::trim_evicted(policies::Policy& policy, const buffer::BufferView& view,
                                buffer::CellCache& cache, uint64_t now_ns, Sink& sink) {
  const buffer::BufferLayout& layout = buffer_.layout();
  // The frames evicted since the last call (a push-out for the arrival, trim_newest's frame).
  for (; trimmed_upto_ < evicted_.frames.size(); ++trimmed_upto_) {
    const buffer::EvictedFrames::Frame& f = evicted_.frames[trimmed_upto_];
    const OverflowAction action = trim_.overflow_of(f.desc.class_id);
    if (action == OverflowAction::kDrop) continue;
    const std::span<const std::byte> raw = evicted_.frame_bytes(f);
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
    ParsedFrame parsed;
    if (!synthetic_) {
      parsed = parse_frame(bytes);
      if (!parsed.ok()) continue;
    }
    const uint32_t port = layout.port_of(f.desc.queue);
    const policies::ArrivalContext ctx{.now_ns = now_ns,
                                       .queue = f.desc.queue,
                                       .port = static_cast<uint16_t>(port),
                                       .class_id = f.desc.class_id,
                                       .in_port = f.desc.in_port,
                                       .cells = f.desc.cells,
                                       .bytes = f.desc.bytes,
                                       .flow_hash = synthetic_ ? 0 : flow_hash(parsed)};
    const buffer::FrameMeta meta{.arrival_ns = f.desc.arrival_ns,
                                 .in_port = f.desc.in_port,
                                 .class_id = f.desc.class_id,
                                 .flags = f.desc.flags};
    // The copy's own admission does not trim what it pushes out in turn (evicted_ is being read).
    send_cut_copy(port, Frame{bytes, synthetic_ ? nullptr : &parsed}, ctx, meta, policy, view,
                  cache, action == OverflowAction::kReturnToSender, sink);
  }
}

bool OverflowStep::trim_newest_instead(void* self, const policies::ArrivalContext& ctx) {
  OverflowStep& s = *static_cast<OverflowStep*>(self);
  const uint32_t p = s.trim_.trim_newest_p16.load(std::memory_order_relaxed);
  // xorshift64: a seeded sequence per RX worker, so a run with one worker repeats.
  s.rng_ ^= s.rng_ << 13;
  s.rng_ ^= s.rng_ >> 7;
  s.rng_ ^= s.rng_ << 17;
  if ((s.rng_ & 0xffff) >= p) return false;
  // The newest frame goes only if it is a trimming class's (a drop class's frame would be lost,
  // not trimmed) and frees the arrival's cells (a smaller one would leave the arrival refused
  // too: two cuts for one overflow). Counted pushed_out, and trimmed, at its queue.
  const auto take = [&](const buffer::PacketDescriptor& d) {
    return d.cells >= ctx.cells && s.trim_.overflow_of(d.class_id) == OverflowAction::kTrim;
  };
  if (s.buffer_.push_out_newest_if(*s.current_.cache, ctx.queue, take, &s.evicted_) == 0)
    return false;
  s.buffer_.stats(ctx.queue).trimmed_newest_pkts.fetch_add(1, std::memory_order_relaxed);
  s.trim_evicted(*s.current_.policy, *s.current_.view, *s.current_.cache, ctx.now_ns,
                 *s.current_.sink);
  return true;
}

}  // namespace sharebuf::model

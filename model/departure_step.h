// The departure step every engine takes when a port sends a frame: the live egress
// (datapath/egress_path.h), the replay (sim/replay.h) and the switch inside ns-3
// (sim/ns3/switch_facade.h). The port's scheduler picks a queue; its head frame leaves (its
// bytes copied out, its cells back to the pool, the queue's counters and delay histogram
// updated), and the policy hears of it at the time its last bit leaves: the clock a Tofino's
// egress pipeline gives each departure. What putting the frame on the wire means and when its
// last bit leaves is the engine's: a TX ring and the port's departure clock live
// (model/departure_clock.h), start + bytes x 8 / rate in the simulations.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "buffer/shared_buffer.h"
#include "model/scheduler.h"
#include "policies/policy.h"

namespace sharebuf::model {

// How long `bytes` take at `rate_bps`, to the nearest nanosecond (as ns-3), at least 1 ns.
uint64_t transmit_ns(uint32_t bytes, uint64_t rate_bps) noexcept;

// The length of queue k of `port`'s head frame; 0 when the queue is empty.
inline uint32_t head_bytes(const buffer::SharedBuffer& buffer, uint32_t port, uint32_t k) noexcept {
  const uint32_t q = buffer.layout().queue_id(port, k);
  // The approximate length first: an empty queue costs no lock.
  if (buffer.queue(q).length_packets_approx() == 0) return 0;
  return buffer.queue(q).head_bytes();
}

// The queue of `port` the scheduler sends from next, or Scheduler::kNone when all are empty.
inline int pick_queue(const buffer::SharedBuffer& buffer, Scheduler& scheduler,
                      uint32_t port) noexcept {
  return scheduler.pick([&](uint32_t k) { return head_bytes(buffer, port, k); });
}

struct Departed {
  uint32_t queue = 0;  // the buffer's queue id
  buffer::PacketDescriptor desc;
  size_t copied = 0;         // bytes copied out
  uint64_t departed_ns = 0;  // its last bit leaves
};

// Queue k of `port` (the scheduler's pick) sends its head frame at `now_ns`. `copy_out` (may be
// empty) receives the frame's bytes, as many as fit, before its cells are freed;
// `transmit(desc, copied)` puts them on the wire and returns when the frame's last bit leaves.
// Empty when the queue lost its head since the pick (pushed out by another thread).
// With `sent_from` given and `copy_out` a free chunk of the memory the frame stays in (a live
// AF_XDP port's, buffer/chunk_store.h), nothing is copied: the frame and the chunk trade places
// (CellPool::swap_chunk) and *sent_from says where the frame is; nullptr when it was copied.
template <typename Transmit>
std::optional<Departed> depart(buffer::SharedBuffer& buffer, buffer::CellCache& cache,
                               Scheduler& scheduler, policies::Policy& policy, uint32_t port,
                               uint32_t k, uint64_t now_ns, std::span<std::byte> copy_out,
                               Transmit&& transmit, std::byte** sent_from = nullptr) noexcept {
  Departed out;
  out.queue = buffer.layout().queue_id(port, k);
  buffer.advance_probes(now_ns);  // the boundary just passed saw this frame queued
  const uint32_t head = buffer.dequeue(out.queue);
  if (head == buffer::kNoCell) return std::nullopt;
  out.desc = buffer.pool().descriptor(head);
  if (sent_from != nullptr &&
      (*sent_from = buffer.pool().swap_chunk(head, copy_out.data())) != nullptr) {
    out.copied = out.desc.bytes;
  } else if (!copy_out.empty()) {
    out.copied = buffer.pool().read_frame(head, copy_out);
  }
  scheduler.sent(static_cast<int>(k), out.desc.bytes);
  buffer::QueueStats& stats = buffer.stats(out.queue);
  stats.dequeued_bytes.fetch_add(out.desc.bytes, std::memory_order_relaxed);
  if ((out.desc.flags & buffer::kFlagTrimmed) != 0)
    stats.trimmed_sent_pkts.fetch_add(1, std::memory_order_relaxed);
  buffer.release(cache, head);
  out.departed_ns = transmit(static_cast<const buffer::PacketDescriptor&>(out.desc), out.copied);
  if (buffer.probes().queued()) {
    // probe_path "queue": the probes that waited behind this frame leave with it.
    constexpr uint64_t kEmpty = buffer::QueuedProbes::kNoFrame;
    buffer.probes().on_departure(buffer.state(), out.queue, out.desc.arrival_ns,
                                 buffer.queue(out.queue).head_arrival_ns(kEmpty),
                                 buffer.state().queue_cells(out.queue), now_ns, out.departed_ns);
  }
  const uint64_t sojourn_ns = out.departed_ns - std::min(out.departed_ns, out.desc.arrival_ns);
  stats.delay.record(sojourn_ns);
  // Egress-side hooks see exact depths, as Tofino's egress pipeline does.
  policy.on_dequeue(policies::DequeueEvent{.now_ns = out.departed_ns,
                                           .queue = out.queue,
                                           .port = static_cast<uint16_t>(port),
                                           .class_id = out.desc.class_id,
                                           .in_port = out.desc.in_port,
                                           .cells = out.desc.cells,
                                           .bytes = out.desc.bytes,
                                           .sojourn_ns = sojourn_ns},
                    buffer.exact_view());
  return out;
}

// The simulations' departure: the port's next frame starts at `start_ns` and its last bit leaves
// transmit_ns(bytes, rate_bps) later. Empty when the port's queues are.
std::optional<Departed> depart_next(buffer::SharedBuffer& buffer, buffer::CellCache& cache,
                                    Scheduler& scheduler, policies::Policy& policy, uint32_t port,
                                    uint64_t start_ns, uint64_t rate_bps,
                                    std::span<std::byte> copy_out = {}) noexcept;

}  // namespace sharebuf::model

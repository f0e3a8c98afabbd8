#include "sim/departure_step.h"

#include <algorithm>
#include <limits>

namespace sharebuf::sim {

uint64_t transmit_ns(uint32_t bytes, uint64_t rate_bps) noexcept {
  // Rounded to the nearest nanosecond, as ns-3 rounds a point-to-point link's transmission time
  // (DataRate::CalculateBytesTxTime): the ns-3 switch and the replay then send at the same
  // instants (1502 B at 10 Gbit/s: 1202 ns, not 1201.6 truncated).
  const uint64_t rate = std::max<uint64_t>(1, rate_bps);
  return std::max<uint64_t>(1, (uint64_t{bytes} * 16'000'000'000ull + rate) / (2 * rate));
}

std::optional<Departed> depart_one(buffer::SharedBuffer& buffer, buffer::CellCache& cache,
                                   datapath::Scheduler& scheduler, policies::Policy& policy,
                                   uint32_t port, uint64_t start_ns, uint64_t rate_bps,
                                   std::span<std::byte> copy_out) noexcept {
  const buffer::BufferLayout& layout = buffer.layout();
  const uint32_t first = layout.first_queue(port);
  const int k = scheduler.pick([&](uint32_t i) -> uint32_t {
    const uint32_t head = buffer.queue(first + i).peek_head();
    return head == buffer::kNoCell ? 0 : buffer.pool().descriptor(head).bytes;
  });
  if (k == datapath::Scheduler::kNone) return std::nullopt;
  Departed out;
  out.queue = first + static_cast<uint32_t>(k);
  buffer.advance_probes(start_ns);
  const uint32_t head = buffer.dequeue(out.queue);
  if (head == buffer::kNoCell) return std::nullopt;
  out.desc = buffer.pool().descriptor(head);
  if (!copy_out.empty()) buffer.pool().read_frame(head, copy_out);
  scheduler.sent(k, out.desc.bytes);
  buffer.stats(out.queue).dequeued_bytes.fetch_add(out.desc.bytes, std::memory_order_relaxed);
  buffer.release(cache, head);
  const uint64_t tx = transmit_ns(out.desc.bytes, rate_bps);
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  out.finish_ns = start_ns > kNever - tx ? kNever : start_ns + tx;
  policy.on_dequeue(policies::DequeueEvent{.now_ns = out.finish_ns,
                                           .queue = out.queue,
                                           .port = static_cast<uint16_t>(port),
                                           .class_id = out.desc.class_id,
                                           .cells = out.desc.cells,
                                           .bytes = out.desc.bytes,
                                           .sojourn_ns = out.finish_ns - out.desc.arrival_ns},
                    buffer.exact_view());
  return out;
}

}  // namespace sharebuf::sim

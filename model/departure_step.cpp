#include "model/departure_step.h"

#include <limits>

namespace sharebuf::model {

uint64_t transmit_ns(uint32_t bytes, uint64_t rate_bps) noexcept {
  // Rounded to the nearest nanosecond, as ns-3 rounds a point-to-point link's transmission time
  // (DataRate::CalculateBytesTxTime): the ns-3 switch and the replay then send at the same
  // instants (1502 B at 10 Gbit/s: 1202 ns, not 1201.6 truncated).
  const uint64_t rate = std::max<uint64_t>(1, rate_bps);
  return std::max<uint64_t>(1, (uint64_t{bytes} * 16'000'000'000ull + rate) / (2 * rate));
}

std::optional<Departed> depart_next(buffer::SharedBuffer& buffer, buffer::CellCache& cache,
                                    Scheduler& scheduler, policies::Policy& policy, uint32_t port,
                                    uint64_t start_ns, uint64_t rate_bps,
                                    std::span<std::byte> copy_out) noexcept {
  const int k = pick_queue(buffer, scheduler, port);
  if (k == Scheduler::kNone) return std::nullopt;
  return depart(buffer, cache, scheduler, policy, port, static_cast<uint32_t>(k), start_ns,
                copy_out, [&](const buffer::PacketDescriptor& d, size_t) {
                  const uint64_t tx = transmit_ns(d.bytes, rate_bps);
                  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
                  return start_ns > kNever - tx ? kNever : start_ns + tx;
                });
}

}  // namespace sharebuf::model

// The departure step of the simulated datapath, shared by the replay (sim/replay.h) and the
// switch inside ns-3 (sim/ns3/switch_facade.h): port p's scheduler picks a queue, its head frame
// leaves at `start_ns` (its cells go back to the pool then), and the policy hears of the
// departure at the time its last bit leaves, start + bytes x 8 / rate (at least 1 ns, so time
// always moves), the clock the live switch gives each departure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "buffer/shared_buffer.h"
#include "datapath/scheduler.h"
#include "policies/policy.h"

namespace sharebuf::sim {

struct Departed {
  uint32_t queue = 0;
  buffer::PacketDescriptor desc;
  uint64_t finish_ns = 0;  // its last bit leaves
};

// How long `bytes` take at `rate_bps`, to the nearest nanosecond (as ns-3), at least 1 ns.
uint64_t transmit_ns(uint32_t bytes, uint64_t rate_bps) noexcept;

// Empty when the port's queues are. `copy_out` (optional) receives the frame's first bytes
// before its cells are freed.
std::optional<Departed> depart_one(buffer::SharedBuffer& buffer, buffer::CellCache& cache,
                                   datapath::Scheduler& scheduler, policies::Policy& policy,
                                   uint32_t port, uint64_t start_ns, uint64_t rate_bps,
                                   std::span<std::byte> copy_out = {}) noexcept;

}  // namespace sharebuf::sim

#include "buffer/probe_registers.h"

namespace sharebuf::buffer {

ProbeRegisters::ProbeRegisters(const BufferLayout& layout, uint64_t interval_ns)
    : layout_(layout),
      interval_ns_(interval_ns),
      regs_(layout),
      last_ns_(std::make_unique<std::atomic<uint64_t>[]>(layout.num_ports())) {}

bool ProbeRegisters::maybe_publish(uint32_t port, const BufferState& state,
                                   uint64_t now_ns) noexcept {
  const uint64_t last = last_ns_[port].load(std::memory_order_relaxed);
  if (now_ns - last < interval_ns() && last != 0) return false;
  publish(port, state, now_ns);
  return true;
}

void ProbeRegisters::publish(uint32_t port, const BufferState& state, uint64_t now_ns) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const Occupancy& live = state.live();
  const uint32_t first = layout_.first_queue(port);
  const uint32_t end = first + layout_.queues_on_port(port);
  for (uint32_t q = first; q < end; ++q)
    regs_.queue[q].v.store(live.queue[q].v.load(kRelaxed), kRelaxed);
  regs_.port[port].v.store(live.port[port].v.load(kRelaxed), kRelaxed);
  regs_.active_on_port[port].store(live.active_on_port[port].load(kRelaxed), kRelaxed);
  for (uint32_t g = 0; g < kNumPriorityGroups; ++g) {
    regs_.group[g].store(live.group[g].load(kRelaxed), kRelaxed);
    regs_.active_in_group[g].store(live.active_in_group[g].load(kRelaxed), kRelaxed);
  }
  regs_.total.store(live.total.load(kRelaxed), kRelaxed);
  regs_.long_queues.store(live.long_queues.load(kRelaxed), kRelaxed);
  // A clock reading of 0 is reserved for "never published".
  last_ns_[port].store(now_ns == 0 ? 1 : now_ns, kRelaxed);
}

void ProbeRegisters::publish_all(const BufferState& state, uint64_t now_ns) noexcept {
  for (uint32_t p = 0; p < layout_.num_ports(); ++p)
    publish(p, state, now_ns);
}

}  // namespace sharebuf::buffer

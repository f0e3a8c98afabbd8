#include "buffer/probe_registers.h"

#include <mutex>

namespace sharebuf::buffer {

ProbeRegisters::ProbeRegisters(const BufferLayout& layout, uint64_t interval_ns, uint64_t delay_ns,
                               ProbePath path, uint32_t fair_share_cells)
    : layout_(layout), interval_ns_(interval_ns == 0 ? 1 : interval_ns), delay_ns_(delay_ns) {
  for (auto& s : slots_)
    s = std::make_unique<Slot>(layout);
  if (path == ProbePath::kQueue) queued_ = std::make_unique<QueuedProbes>(layout, fair_share_cells);
}

std::optional<std::string> ProbeRegisters::check_timing(uint64_t interval_ns, uint64_t delay_ns) {
  if (interval_ns < kMinIntervalNs || interval_ns > kMaxIntervalNs)
    return "the probe interval must be between 1us and 1s";
  if (delay_ns > (kSlots - 2) * interval_ns) {
    return "the probe delay may be at most " + std::to_string(kSlots - 2) + " probe intervals (" +
           std::to_string((kSlots - 2) * interval_ns) + " ns at this interval)";
  }
  return std::nullopt;
}

void ProbeRegisters::set_timing(uint64_t interval_ns, uint64_t delay_ns) noexcept {
  std::lock_guard guard(publish_lock_);
  interval_ns_.store(interval_ns == 0 ? 1 : interval_ns, std::memory_order_relaxed);
  delay_ns_.store(delay_ns, std::memory_order_relaxed);
  next_boundary_ns_.store(0, std::memory_order_relaxed);
  // The queued probes take the new timing at once; their registers and the probes counted as
  // back are kept (a probe in a queue is not lost by a new interval).
  if (queued_) queued_->set_timing(interval_ns, delay_ns);
}

void ProbeRegisters::set_enabled(bool on, const BufferState& state, uint64_t now_ns) noexcept {
  std::lock_guard guard(publish_lock_);
  if (on && !enabled()) {
    snapshot_locked(state, now_ns);
    if (queued_) queued_->reset(state, now_ns, interval_ns(), delay_ns());
  }
  enabled_.store(on, std::memory_order_relaxed);
}

uint64_t ProbeRegisters::visible_seq(uint64_t now_ns) const noexcept {
  // acquire pairs with the release store in publish(): the newest slot's contents are visible.
  const uint64_t latest = seq_.load(std::memory_order_acquire);
  const uint64_t interval = interval_ns();
  const uint64_t delay = delay_ns();
  const uint64_t seen = now_ns > delay ? now_ns - delay : 0;
  const uint64_t target = seen - seen % interval;
  // A snapshot stands for the boundaries after the previous one up to its own, so the registers
  // of `target` are in the oldest snapshot at or after it; of two taken for one boundary (the
  // registers were just enabled), the newer.
  const uint64_t lower = latest > kSlots - 2 ? latest - (kSlots - 2) : 0;
  uint64_t s = latest;
  uint64_t boundary = slot(s).boundary_ns.load(std::memory_order_relaxed);
  while (s > lower) {
    const uint64_t before = slot(s - 1).boundary_ns.load(std::memory_order_relaxed);
    if (before < target || before >= boundary) break;
    --s;
    boundary = before;
  }
  return s;
}

void ProbeRegisters::publish(const BufferState& state, uint64_t now_ns) noexcept {
  std::lock_guard guard(publish_lock_);
  if (now_ns < next_boundary_ns_.load(std::memory_order_relaxed)) return;  // another did it
  snapshot_locked(state, now_ns);
}

void ProbeRegisters::snapshot_locked(const BufferState& state, uint64_t now_ns) noexcept {
  const uint64_t interval = interval_ns();
  const uint64_t boundary = now_ns - now_ns % interval;
  const uint64_t s = seq_.load(std::memory_order_relaxed) + 1;
  copy_live(state, slot(s), boundary);
  // release pairs with the acquire load in visible_seq(): the slot is written before it is seen.
  seq_.store(s, std::memory_order_release);
  next_boundary_ns_.store(boundary + interval, std::memory_order_relaxed);
}

void ProbeRegisters::copy_live(const BufferState& state, Slot& to, uint64_t boundary_ns) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const Occupancy& live = state.live();
  Occupancy& r = to.regs;
  for (uint32_t q = 0; q < layout_.num_queues(); ++q)
    r.queue[q].v.store(live.queue[q].v.load(kRelaxed), kRelaxed);
  for (uint32_t p = 0; p < layout_.num_ports(); ++p) {
    r.port[p].v.store(live.port[p].v.load(kRelaxed), kRelaxed);
    r.active_on_port[p].store(live.active_on_port[p].load(kRelaxed), kRelaxed);
  }
  for (uint32_t g = 0; g < kNumPriorityGroups; ++g) {
    r.group[g].store(live.group[g].load(kRelaxed), kRelaxed);
    r.active_in_group[g].store(live.active_in_group[g].load(kRelaxed), kRelaxed);
  }
  r.total.store(live.total.load(kRelaxed), kRelaxed);
  r.long_queues.store(live.long_queues.load(kRelaxed), kRelaxed);
  to.boundary_ns.store(boundary_ns, kRelaxed);
}

}  // namespace sharebuf::buffer

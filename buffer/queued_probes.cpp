#include "buffer/queued_probes.h"

#include <algorithm>
#include <mutex>

namespace sharebuf::buffer {

QueuedProbes::QueuedProbes(const BufferLayout& layout, uint32_t fair_share_cells)
    : layout_(layout),
      fair_share_(fair_share_cells),
      regs_(layout),
      passed_(std::make_unique<std::atomic<uint64_t>[]>(layout.num_queues())),
      zero_at_(std::make_unique<std::atomic<uint64_t>[]>(layout.num_queues())),
      max_pending_(static_cast<size_t>(layout.num_queues()) * 256) {
  pending_.reserve(std::min<size_t>(max_pending_, 4096));
}

void QueuedProbes::reset(const BufferState& state, uint64_t now_ns, uint64_t interval_ns,
                         uint64_t delay_ns) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  std::lock_guard guard(lock_);
  interval_ns = interval_ns == 0 ? 1 : interval_ns;
  interval_ns_.store(interval_ns, kRelaxed);
  delay_ns_.store(delay_ns, kRelaxed);
  pending_.clear();
  const uint64_t boundary = now_ns - now_ns % interval_ns;
  // Start from zero and write every queue's live depth, so the sums are the registers' sums.
  const Occupancy& live = state.live();
  for (uint32_t q = 0; q < layout_.num_queues(); ++q) {
    passed_[q].store(boundary, kRelaxed);
    zero_at_[q].store(0, kRelaxed);
    regs_.queue[q].v.store(0, kRelaxed);
  }
  for (uint32_t p = 0; p < layout_.num_ports(); ++p) {
    regs_.port[p].v.store(0, kRelaxed);
    regs_.active_on_port[p].store(0, kRelaxed);
  }
  for (uint32_t g = 0; g < kNumPriorityGroups; ++g) {
    regs_.group[g].store(0, kRelaxed);
    regs_.active_in_group[g].store(0, kRelaxed);
  }
  regs_.long_queues.store(0, kRelaxed);
  queue_sum_.store(0, kRelaxed);
  for (uint32_t q = 0; q < layout_.num_queues(); ++q)
    write_locked(state, q, live.queue[q].v.load(kRelaxed));
  regs_.total.store(static_cast<uint32_t>(queue_sum_.load(kRelaxed)) + state.outside_cells(),
                    kRelaxed);
  next_due_ns_.store(kNoFrame, kRelaxed);
}

void QueuedProbes::set_timing(uint64_t interval_ns, uint64_t delay_ns) noexcept {
  std::lock_guard guard(lock_);
  interval_ns_.store(interval_ns == 0 ? 1 : interval_ns, std::memory_order_relaxed);
  delay_ns_.store(delay_ns, std::memory_order_relaxed);
}

void QueuedProbes::on_departure(const BufferState& state, uint32_t q, uint64_t arrival_ns,
                                uint64_t next_arrival_ns, uint32_t depth_cells, uint64_t now_ns,
                                uint64_t left_ns) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const uint64_t interval = interval_ns_.load(kRelaxed);
  // The probes behind this frame and ahead of the next: boundaries in [arrival, next arrival).
  const uint64_t limit =
      next_arrival_ns == kNoFrame ? left_ns : std::min(left_ns, next_arrival_ns - 1);
  const uint64_t b = limit - limit % interval;
  const bool probe_leaves = b >= arrival_ns && b > passed_[q].load(kRelaxed);
  if (!probe_leaves && next_arrival_ns != kNoFrame) return;  // the common case: no lock
  std::lock_guard guard(lock_);
  if (probe_leaves) {
    passed_[q].store(b, kRelaxed);
    post_locked(state, q, depth_cells, left_ns + delay_ns_.load(kRelaxed), now_ns);
  } else {
    // Empty, no probe behind the frame: the next boundary's probe will find q empty.
    const uint64_t z = left_ns - left_ns % interval + interval;
    zero_at_[q].store(z, kRelaxed);
    lower_next_due(z);
  }
}

void QueuedProbes::on_arrival_to_empty(const BufferState& state, uint32_t q,
                                       uint64_t arrival_ns) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  if (zero_at_[q].load(kRelaxed) == 0) return;
  std::lock_guard guard(lock_);
  const uint64_t z = zero_at_[q].load(kRelaxed);
  if (z == 0) return;
  zero_at_[q].store(0, kRelaxed);
  // Before z, z's probe waits behind this frame (a stale next_due_ns_ costs one early
  // apply_due()); at or after it, the probes of the boundaries since z left at once and read 0.
  if (arrival_ns >= z) {
    const uint64_t interval = interval_ns_.load(kRelaxed);
    passed_[q].store(arrival_ns - arrival_ns % interval, kRelaxed);
    post_locked(state, q, 0, z + delay_ns_.load(kRelaxed), arrival_ns);
  }
}

void QueuedProbes::apply_due(const BufferState& state, uint64_t now_ns) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  std::lock_guard guard(lock_);
  // Queues still empty at their zero boundary: that probe left with 0.
  for (uint32_t q = 0; q < layout_.num_queues(); ++q) {
    const uint64_t z = zero_at_[q].load(kRelaxed);
    if (z == 0 || now_ns < z) continue;
    zero_at_[q].store(0, kRelaxed);
    // Live only: a frame that arrived between the departure that emptied q and its note of z
    // found no zero pending; q is not empty then, and its probe waits behind that frame.
    if (state.queue_cells(q) != 0) continue;
    passed_[q].store(now_ns - now_ns % interval_ns_.load(kRelaxed), kRelaxed);
    pending_.push_back(Update{z + delay_ns_.load(kRelaxed), q, 0});
  }
  // Readings in the order they reach ingress; a queue's own readings are posted in that order.
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Update& a, const Update& b) { return a.due_ns < b.due_ns; });
  size_t n = 0;
  while (n < pending_.size() && pending_[n].due_ns <= now_ns) {
    write_locked(state, pending_[n].queue, pending_[n].cells);
    ++n;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  recompute_next_due_locked();
}

void QueuedProbes::post_locked(const BufferState& state, uint32_t q, uint32_t cells,
                               uint64_t due_ns, uint64_t now_ns) noexcept {
  if (due_ns <= now_ns && pending_.empty()) {
    write_locked(state, q, cells);
    return;
  }
  if (pending_.size() >= max_pending_) {
    // More readings in flight than the delay allows for: the oldest reaches ingress now.
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const Update& a, const Update& b) { return a.due_ns < b.due_ns; });
    write_locked(state, pending_.front().queue, pending_.front().cells);
    pending_.erase(pending_.begin());
  }
  pending_.push_back(Update{due_ns, q, cells});
  lower_next_due(due_ns);
}

void QueuedProbes::write_locked(const BufferState& state, uint32_t q, uint32_t cells) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const uint32_t before = regs_.queue[q].v.load(kRelaxed);
  if (before != cells) {
    const uint32_t port = layout_.port_of(q);
    const uint32_t g = static_cast<uint32_t>(layout_.group_of(q));
    // Unsigned wrap-around adds the signed change.
    const uint32_t change = cells - before;
    regs_.queue[q].v.store(cells, kRelaxed);
    regs_.port[port].v.fetch_add(change, kRelaxed);
    regs_.group[g].fetch_add(change, kRelaxed);
    queue_sum_.store(queue_sum_.load(kRelaxed) + cells - before, kRelaxed);
    if ((before == 0) != (cells == 0)) {
      const int32_t step = cells == 0 ? -1 : 1;
      regs_.active_in_group[g].fetch_add(step, kRelaxed);
      regs_.active_on_port[port].fetch_add(step, kRelaxed);
    }
    if ((before >= fair_share_) != (cells >= fair_share_))
      regs_.long_queues.fetch_add(cells >= fair_share_ ? 1 : -1, kRelaxed);
  }
  regs_.total.store(static_cast<uint32_t>(queue_sum_.load(kRelaxed)) + state.outside_cells(),
                    kRelaxed);
}

void QueuedProbes::recompute_next_due_locked() noexcept {
  uint64_t next = kNoFrame;
  for (const Update& u : pending_)
    next = std::min(next, u.due_ns);
  for (uint32_t q = 0; q < layout_.num_queues(); ++q) {
    const uint64_t z = zero_at_[q].load(std::memory_order_relaxed);
    if (z != 0) next = std::min(next, z);
  }
  next_due_ns_.store(next, std::memory_order_relaxed);
}

void QueuedProbes::lower_next_due(uint64_t due_ns) noexcept {
  if (due_ns < next_due_ns_.load(std::memory_order_relaxed))
    next_due_ns_.store(due_ns, std::memory_order_relaxed);
}

size_t QueuedProbes::pending() const noexcept {
  std::lock_guard guard(lock_);
  return pending_.size();
}

}  // namespace sharebuf::buffer

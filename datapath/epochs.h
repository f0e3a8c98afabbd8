// Epochs: when an object the workers read through an atomic pointer (the active policy, the
// active capture) is replaced, the old one is freed once no worker can still hold it — a daemon
// that switches policies for a week must not keep every one it ever had.
//
// Each worker thread owns a slot. At every batch boundary — where it holds no such pointer — it
// announces the global epoch it has seen (enter()), then loads the pointers it needs; before it
// blocks it announces that it holds none (idle()). The control thread swaps a pointer, then
// advances the epoch to E and retires the old object at E; the object may be freed once every
// slot shows E or more, or idle. Why that is safe: a slot at E or more was stored after its
// worker read an epoch of at least E, which was after the swap (all seq_cst), so that worker's
// later loads see the new object and its uses of the old one came before the store the control
// thread read. A worker waking from idle announces before it loads anything, so whichever order
// it and the control thread's check take, it never loads the retired object.
//
// Cost on the workers: one load and one store per batch (and one store before blocking).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace sharebuf::datapath {

class EpochDomain {
 public:
  static constexpr uint64_t kIdle = UINT64_MAX;

  explicit EpochDomain(uint32_t slots) : slots_(std::make_unique<Slot[]>(slots)), count_(slots) {}

  uint32_t slots() const noexcept { return count_; }

  // Worker side (slot `s` belongs to one thread).
  void enter(uint32_t s) noexcept {
    slots_[s].seen.store(epoch_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
  }
  void idle(uint32_t s) noexcept { slots_[s].seen.store(kIdle, std::memory_order_seq_cst); }

  // Control side: call after swapping a pointer; returns the epoch the old object retires at.
  uint64_t advance() noexcept { return epoch_.fetch_add(1, std::memory_order_seq_cst) + 1; }
  // Whether every worker has passed a boundary at or after epoch `e` (or holds nothing).
  bool passed(uint64_t e) const noexcept {
    for (uint32_t s = 0; s < count_; ++s) {
      const uint64_t seen = slots_[s].seen.load(std::memory_order_seq_cst);
      if (seen != kIdle && seen < e) return false;
    }
    return true;
  }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> seen{kIdle};
  };
  std::atomic<uint64_t> epoch_{1};
  std::unique_ptr<Slot[]> slots_;
  uint32_t count_;
};

}  // namespace sharebuf::datapath

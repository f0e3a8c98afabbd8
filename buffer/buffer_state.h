// BufferState: the shared buffer's occupancy accounting in cells — per queue, per port, per
// priority group and total — with the peak of each. It is the single source of truth that
// survives a policy switch.
//
// Invariant: the total is reserved with a compare-and-swap, so the sum of reserved cells never
// exceeds capacity B, however many RX workers race; at every quiescent point
// total == sum(queue) + outside == sum(port) + outside == sum(group) + outside and free + total
// == B (outside: cells no queue owns, see outside_cells()).
//
// Thread-safety: try_reserve() is called concurrently by RX workers, release() by egress workers
// and by RX workers pushing out; all counters are atomics (relaxed: they are statistics and
// thresholds, not publication of data — frames are published by the queue locks). Peaks are
// monotonic maxima updated with a CAS loop that only runs when a new peak is reached.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "buffer/buffer_layout.h"
#include "buffer/occupancy.h"

namespace sharebuf::buffer {

class BufferState {
 public:
  explicit BufferState(const BufferLayout& layout);

  const BufferLayout& layout() const noexcept { return layout_; }
  uint32_t capacity_cells() const noexcept { return capacity_; }
  // ceil(B / N): a queue at least this long counts in Occupancy::long_queues.
  uint32_t fair_share_cells() const noexcept { return fair_share_; }

  // Reserves `cells` for `queue`. Returns false, changing nothing, if they do not fit in B.
  bool try_reserve(uint32_t queue, uint32_t cells) noexcept;
  // Reserves as many of `cells` as are free (possibly 0) for `queue`; returns how many.
  uint32_t reserve_up_to(uint32_t queue, uint32_t cells) noexcept;
  void release(uint32_t queue, uint32_t cells) noexcept;
  // Moves `cells` of accounted occupancy from queue `from` to queue `to` without returning them
  // to the pool in between: LQD hands a pushed-out frame's cells to the arrival it makes room
  // for, so a racing arrival on another RX worker cannot take them first.
  void transfer(uint32_t from, uint32_t to, uint32_t cells) noexcept;

  // Cells held outside every queue: frames in an emulated recirculation port (trimming's Tofino
  // approximation, model/tofino_approx.h). On a Tofino a deflected frame waits in the
  // recirculation port's queue, in the same traffic-manager cells, so it counts in the total
  // that every policy's free space is computed from; no queue, port or group owns it.
  // try_reserve_outside: false, changing nothing, if the cells do not fit in B.
  bool try_reserve_outside(uint32_t cells) noexcept;
  void release_outside(uint32_t cells) noexcept;
  uint32_t outside_cells() const noexcept { return outside_.load(std::memory_order_relaxed); }

  // The header reserve: `cells` per port set aside, at start, for trimmed copies leaving that
  // port (NDP's header queue: headers do not contend with data for the shared buffer). Unused,
  // the reserve counts outside the queues (in the total, so every policy's free space is the
  // buffer less the reserve); a header that takes reserve cells moves them into its queue
  // without touching the total, and gives them back to its port's reserve when it leaves.
  // set_header_reserve: once, before any frame; false, changing nothing, if ports x cells do not
  // fit in B.
  bool set_header_reserve(uint32_t cells_per_port) noexcept;
  uint32_t header_reserve_cells() const noexcept { return header_reserve_; }
  // Takes `cells` of queue's port's reserve into `queue`; false, changing nothing, if they are
  // not free.
  bool take_header_cells(uint32_t queue, uint32_t cells) noexcept;
  void return_header_cells(uint32_t queue, uint32_t cells) noexcept;
  uint32_t header_free_cells(uint32_t port) const noexcept {
    return header_reserve_ == 0 ? 0 : header_free_[port].v.load(std::memory_order_relaxed);
  }

  const Occupancy& live() const noexcept { return live_; }
  uint32_t total_cells() const noexcept { return live_.total.load(std::memory_order_relaxed); }
  uint32_t free_cells() const noexcept { return capacity_ - total_cells(); }
  uint32_t queue_cells(uint32_t q) const noexcept {
    return live_.queue[q].v.load(std::memory_order_relaxed);
  }
  uint32_t port_cells(uint32_t p) const noexcept {
    return live_.port[p].v.load(std::memory_order_relaxed);
  }
  uint32_t group_cells(PriorityGroup g) const noexcept {
    return live_.group[static_cast<uint32_t>(g)].load(std::memory_order_relaxed);
  }

  uint32_t peak_total_cells() const noexcept { return peak_total_.load(std::memory_order_relaxed); }
  uint32_t peak_queue_cells(uint32_t q) const noexcept {
    return peak_queue_[q].v.load(std::memory_order_relaxed);
  }
  uint32_t peak_port_cells(uint32_t p) const noexcept {
    return peak_port_[p].v.load(std::memory_order_relaxed);
  }
  uint32_t peak_group_cells(PriorityGroup g) const noexcept {
    return peak_group_[static_cast<uint32_t>(g)].load(std::memory_order_relaxed);
  }
  // Sets every peak to the current value.
  void reset_peaks() noexcept;

 private:
  // Per-queue, per-port and per-group counters (not the total).
  void add(uint32_t queue, uint32_t cells) noexcept;
  void remove(uint32_t queue, uint32_t cells) noexcept;

  const BufferLayout& layout_;
  uint32_t capacity_;
  uint32_t fair_share_;
  Occupancy live_;
  std::atomic<uint32_t> outside_{0};
  uint32_t header_reserve_ = 0;
  std::unique_ptr<PaddedCounter[]> header_free_;  // per port, when header_reserve_ != 0
  std::atomic<uint32_t> peak_total_{0};
  std::atomic<uint32_t> peak_group_[kNumPriorityGroups] = {};
  std::unique_ptr<PaddedCounter[]> peak_queue_;
  std::unique_ptr<PaddedCounter[]> peak_port_;
};

}  // namespace sharebuf::buffer

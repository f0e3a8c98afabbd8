// Scheduler: picks which of a port's queues sends next — strict priority (queue 0 first), round
// robin (one frame per non-empty queue in turn), or deficit round robin with per-queue weights
// (quantum = weight x 1514 bytes, so weights are shares of bytes), in two forms:
// - kDrr (`drr`), cyclic: the queues are visited in index order; a queue found empty loses its
//   deficit. A queue that turns non-empty is served when the visit reaches its index.
// - kDrrActive (`drr_active`), Shreedhar and Varghese's active list ("Efficient fair queuing
//   using deficit round robin", SIGCOMM 1995): a queue that turns non-empty joins the tail of the
//   list; the head queue gets its quantum, sends while its deficit covers its head frame, then
//   goes to the tail (or, empty, leaves the list with its deficit cleared). The scheduler learns
//   of arrivals only when it looks: at each pick it first settles the queue that sent last (as
//   the algorithm does right after a send), then queues found non-empty join the tail in index
//   order; a queue that empties and refills between two picks keeps its place.
// Both give each backlogged queue its weight's share of the bytes; they differ in the order
// frames leave when queues come and go (scheduler_test.cpp has a trace where they differ).
// Owned by the port's egress worker; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "model/switch_config.h"

namespace sharebuf::model {

class Scheduler {
 public:
  static constexpr uint32_t kQuantumUnitBytes = 1514;
  static constexpr int kNone = -1;

  Scheduler(SchedulerKind kind, uint32_t num_queues, const std::vector<uint32_t>& weights);

  // `head_bytes(i)` returns the length of queue i's oldest frame, or 0 if it is empty. Returns
  // the queue to send from, or kNone if every queue is empty. Call sent() after sending.
  template <typename HeadBytes>
  int pick(HeadBytes&& head_bytes) noexcept;
  void sent(int queue, uint32_t bytes) noexcept;

  SchedulerKind kind() const noexcept { return kind_; }
  // Scheduler share of queue q among the non-empty queues `active` (FB's gamma "share").
  double share(uint32_t q, const std::vector<bool>& active) const noexcept;

 private:
  SchedulerKind kind_;
  uint32_t n_;
  std::vector<uint64_t> quantum_;
  std::vector<int64_t> deficit_;
  uint32_t next_ = 0;       // round-robin / DRR pointer
  bool topped_up_ = false;  // DRR: the queue visited has received its quantum this visit
  // kDrrActive: the active list, a ring of n_ slots (no allocation on the egress path): head
  // first, active_count_ queues from active_head_.
  std::vector<uint32_t> active_;
  uint32_t active_head_ = 0;
  uint32_t active_count_ = 0;
  std::vector<bool> listed_;  // kDrrActive: queue q is on the active list
  void push_active(uint32_t q) noexcept { active_[(active_head_ + active_count_++) % n_] = q; }
  uint32_t pop_active() noexcept {
    const uint32_t q = active_[active_head_];
    active_head_ = (active_head_ + 1) % n_;
    --active_count_;
    return q;
  }
  // The head queue, found empty, leaves the list with its deficit cleared.
  void retire_active_head() noexcept {
    const uint32_t q = pop_active();
    deficit_[q] = 0;
    listed_[q] = false;
    topped_up_ = false;
  }
  template <typename HeadBytes>
  int pick_active(HeadBytes&& head_bytes) noexcept;
};

template <typename HeadBytes>
int Scheduler::pick(HeadBytes&& head_bytes) noexcept {
  switch (kind_) {
    case SchedulerKind::kStrictPriority:
      for (uint32_t q = 0; q < n_; ++q) {
        if (head_bytes(q) != 0) return static_cast<int>(q);
      }
      return kNone;
    case SchedulerKind::kRoundRobin:
      for (uint32_t i = 0; i < n_; ++i) {
        const uint32_t q = (next_ + i) % n_;
        if (head_bytes(q) != 0) {
          next_ = (q + 1) % n_;
          return static_cast<int>(q);
        }
      }
      return kNone;
    case SchedulerKind::kDrr:
      // At most two passes: the first may only top up deficits.
      for (uint32_t i = 0; i < 2 * n_ + 1; ++i) {
        const uint32_t bytes = head_bytes(next_);
        if (bytes == 0) {
          deficit_[next_] = 0;  // an idle queue keeps no credit
        } else {
          if (!topped_up_) {
            deficit_[next_] += static_cast<int64_t>(quantum_[next_]);
            topped_up_ = true;
          }
          if (deficit_[next_] >= static_cast<int64_t>(bytes)) return static_cast<int>(next_);
        }
        next_ = (next_ + 1) % n_;
        topped_up_ = false;
      }
      return kNone;
    case SchedulerKind::kDrrActive:
      return pick_active(head_bytes);
  }
  return kNone;
}

template <typename HeadBytes>
int Scheduler::pick_active(HeadBytes&& head_bytes) noexcept {
  // The queue that sent last is settled first, as Shreedhar and Varghese settle it right after
  // the send: emptied, it leaves the list; its deficit short of its next frame, it goes to the
  // tail, ahead of queues that turned non-empty since.
  if (topped_up_ && active_count_ != 0) {
    const uint32_t q = active_[active_head_];
    const uint32_t bytes = head_bytes(q);
    if (bytes == 0) {
      retire_active_head();
    } else if (deficit_[q] < static_cast<int64_t>(bytes)) {
      push_active(pop_active());
      topped_up_ = false;
    }
  }
  for (uint32_t q = 0; q < n_; ++q) {
    if (!listed_[q] && head_bytes(q) != 0) {
      push_active(q);
      listed_[q] = true;
    }
  }
  // Each turn without a send tops the head queue up by a quantum of at least 1514 bytes, so a
  // frame of any size is reached; the bound only guards against a head_bytes that lies.
  for (uint32_t turns = 0; active_count_ != 0 && turns < 64 * n_ + 1; ++turns) {
    const uint32_t q = active_[active_head_];
    const uint32_t bytes = head_bytes(q);
    if (bytes == 0) {
      retire_active_head();
      continue;
    }
    if (!topped_up_) {
      deficit_[q] += static_cast<int64_t>(quantum_[q]);
      topped_up_ = true;
    }
    if (deficit_[q] >= static_cast<int64_t>(bytes)) return static_cast<int>(q);
    push_active(pop_active());
    topped_up_ = false;
  }
  return kNone;
}

}  // namespace sharebuf::model

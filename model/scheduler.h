// Scheduler: picks which of a port's queues sends next — strict priority (queue 0 first), round
// robin (one frame per non-empty queue in turn), or deficit round robin with per-queue weights
// (quantum = weight x 1514 bytes, so weights are shares of bytes, Shreedhar & Varghese).
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
  bool topped_up_ = false;  // DRR: the queue at next_ has received its quantum this visit
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
  }
  return kNone;
}

}  // namespace sharebuf::model

#include "model/scheduler.h"

namespace sharebuf::model {

Scheduler::Scheduler(SchedulerKind kind, uint32_t num_queues, const std::vector<uint32_t>& weights)
    : kind_(kind),
      n_(num_queues),
      quantum_(num_queues),
      deficit_(num_queues, 0),
      active_(num_queues, 0),
      listed_(num_queues, false) {
  for (uint32_t q = 0; q < n_; ++q) {
    const uint32_t w = q < weights.size() && weights[q] > 0 ? weights[q] : 1;
    quantum_[q] = uint64_t{w} * kQuantumUnitBytes;
  }
}

void Scheduler::sent(int queue, uint32_t bytes) noexcept {
  if ((kind_ == SchedulerKind::kDrr || kind_ == SchedulerKind::kDrrActive) && queue >= 0)
    deficit_[queue] -= bytes;
}

double Scheduler::share(uint32_t q, const std::vector<bool>& active) const noexcept {
  uint32_t n_active = 0;
  uint64_t weight_sum = 0;
  for (uint32_t i = 0; i < n_; ++i) {
    if (active[i] || i == q) {
      ++n_active;
      weight_sum += quantum_[i];
    }
  }
  switch (kind_) {
    case SchedulerKind::kRoundRobin:
      return 1.0 / n_active;
    case SchedulerKind::kDrr:
    case SchedulerKind::kDrrActive:
      return static_cast<double>(quantum_[q]) / static_cast<double>(weight_sum);
    case SchedulerKind::kStrictPriority:
      for (uint32_t i = 0; i < q; ++i) {
        if (active[i]) return 1.0 / n_active;  // below a busy queue: never 0 for the arrival
      }
      return 1.0;
  }
  return 1.0;
}

}  // namespace sharebuf::model

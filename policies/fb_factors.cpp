#include "policies/fb_factors.h"

#include <algorithm>

namespace sharebuf::policies {

double congested_queues(uint32_t queue, PriorityGroup group, const BufferView& view) noexcept {
  const BufferLayout& layout = view.layout();
  const bool arriving_counts = view.queue_cells(queue) == 0;
  double n;
  if (layout.queues_on_port(layout.port_of(queue)) == 1) {
    // Single queue per port: every congested queue counts, whatever its class.
    n = view.active_queues(PriorityGroup::kLow) + view.active_queues(PriorityGroup::kHigh);
  } else {
    n = view.active_queues(group);
  }
  return std::max(1.0, n + (arriving_counts ? 1 : 0));
}

double scheduler_share(uint32_t queue, const PolicyEnv& env, const BufferView& view) noexcept {
  const BufferLayout& layout = view.layout();
  const uint32_t port = layout.port_of(queue);
  const uint32_t first = layout.first_queue(port);
  const uint32_t n = layout.queues_on_port(port);
  if (n == 1) return 1.0;
  const PortScheduling* sched =
      port < env.port_scheduling.size() ? &env.port_scheduling[port] : nullptr;
  const SchedulingKind kind = sched != nullptr ? sched->kind : SchedulingKind::kRoundRobin;
  if (kind == SchedulingKind::kRoundRobin) {
    // O(1): the view counts each port's non-empty queues.
    const uint32_t active =
        view.active_queues_on_port(port) + (view.queue_cells(queue) == 0 ? 1 : 0);
    return 1.0 / std::max(1u, active);
  }
  uint32_t active = 0;
  double weight_sum = 0;
  double own_weight = 1;
  bool busier_above = false;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t q = first + k;
    const bool busy = q == queue || view.queue_cells(q) != 0;
    if (!busy) continue;
    ++active;
    const double w = sched != nullptr && k < sched->weights.size() ? sched->weights[k] : 1.0;
    weight_sum += w;
    if (q == queue) own_weight = w;
    if (q < queue) busier_above = true;
  }
  switch (kind) {
    case SchedulingKind::kRoundRobin:
      return 1.0 / active;
    case SchedulingKind::kDrr:
      return own_weight / weight_sum;
    case SchedulingKind::kStrictPriority:
      // Below a busy queue a strict-priority queue gets nothing; the arriving queue is never
      // given 0 (docs/policies/fb.md), so it counts as an equal share.
      return busier_above ? 1.0 / active : 1.0;
  }
  return 1.0;
}

}  // namespace sharebuf::policies

#include "policies/fb.h"

#include <algorithm>
#include <cmath>

namespace sharebuf::policies {

FbPolicy::FbPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_high_ = reader.number("alpha_high", 20, 1.0 / 1024, 1024);
  alpha_low_ = reader.number("alpha_low", 0.5, 1.0 / 1024, 1024);
  measured_ = reader.choice("gamma", "share", {"share", "measured"}) == "measured";
  gamma_weight_ = reader.number("gamma_weight", 0.125, 1.0 / 1024, 1);
  alphas_.fill(alpha_low_);
  for (size_t c = 0; c < alphas_.size(); ++c) {
    const auto cls = static_cast<uint8_t>(c);
    const bool high = env.group_of_class(cls) == PriorityGroup::kHigh;
    alphas_[c] = c < env.classes.size() && env.classes[c].alpha ? *env.classes[c].alpha
                 : high                                         ? alpha_high_
                                                                : alpha_low_;
  }
  rates_ = std::make_unique<RateState[]>(env.layout->num_queues());
}

double FbPolicy::n_p(uint32_t queue, uint8_t class_id, const BufferView& view) const noexcept {
  const BufferLayout& layout = view.layout();
  const bool arriving_counts = view.queue_cells(queue) == 0;
  double n;
  if (layout.queues_on_port(layout.port_of(queue)) == 1) {
    // Single queue per port: every congested queue counts, whatever its class.
    n = view.active_queues(PriorityGroup::kLow) + view.active_queues(PriorityGroup::kHigh);
  } else {
    n = view.active_queues(env().group_of_class(class_id));
  }
  return std::max(1.0, n + (arriving_counts ? 1 : 0));
}

double FbPolicy::share(uint32_t queue, const BufferView& view) const noexcept {
  const BufferLayout& layout = view.layout();
  const uint32_t port = layout.port_of(queue);
  const uint32_t first = layout.first_queue(port);
  const uint32_t n = layout.queues_on_port(port);
  if (n == 1) return 1.0;
  const PortScheduling* sched =
      port < env().port_scheduling.size() ? &env().port_scheduling[port] : nullptr;
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
      // given 0 (POLICIES.md), so it counts as an equal share.
      return busier_above ? 1.0 / active : 1.0;
  }
  return 1.0;
}

double FbPolicy::gamma(uint32_t queue, const BufferView& view) const noexcept {
  const double floor = share(queue, view);
  if (!measured_) return floor;
  const double rate = rates_[queue].rate_cells_per_s.load(std::memory_order_relaxed);
  if (rate <= 0) return floor;
  return std::min(1.0, rate / env().rate_cells_per_s(view.layout().port_of(queue)));
}

void FbPolicy::on_dequeue(const DequeueEvent& ev, const BufferView&) noexcept {
  if (!measured_) return;
  RateState& s = rates_[ev.queue];
  const uint64_t last = s.last_ns.exchange(ev.now_ns, std::memory_order_relaxed);
  if (last == 0 || ev.now_ns <= last) return;
  const double sample = ev.cells * 1e9 / static_cast<double>(ev.now_ns - last);
  const double old = s.rate_cells_per_s.load(std::memory_order_relaxed);
  s.rate_cells_per_s.store(old == 0 ? sample : old + gamma_weight_ * (sample - old),
                           std::memory_order_relaxed);
}

uint32_t FbPolicy::threshold_cells(uint32_t queue, uint8_t class_id,
                                   const BufferView& view) const noexcept {
  return static_cast<uint32_t>(
      std::min<double>(std::ceil(threshold(queue, class_id, view)), view.capacity_cells()));
}

nlohmann::json FbPolicy::params() const {
  return {{"alpha_high", alpha_high_},
          {"alpha_low", alpha_low_},
          {"gamma", measured_ ? "measured" : "share"},
          {"gamma_weight", gamma_weight_}};
}

nlohmann::json FbPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json n_p_json = nlohmann::json::array();
  nlohmann::json gamma_json = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    n_p_json.push_back(n_p(q, env().class_of_queue(q), view));
    gamma_json.push_back(gamma(q, view));
  }
  d["state"]["n_p"] = n_p_json;
  d["state"]["gamma"] = gamma_json;
  d["state"]["congested"] = {{"low", view.active_queues(PriorityGroup::kLow)},
                             {"high", view.active_queues(PriorityGroup::kHigh)}};
  return d;
}

}  // namespace sharebuf::policies

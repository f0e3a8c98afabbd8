#include "policies/fb.h"

#include "policies/fb_factors.h"

#include <algorithm>
#include <cmath>

namespace sharebuf::policies {

FbPolicy::FbPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_high_ = reader.number("alpha_high");
  alpha_low_ = reader.number("alpha_low");
  measured_ = reader.choice("gamma") == "measured";
  gamma_weight_ = reader.number("gamma_weight");
  set_params(reader.values());
  alphas_ = resolve_group_alphas(env, alpha_high_, alpha_low_);
  rates_ = std::make_unique<RateState[]>(env.layout->num_queues());
}

double FbPolicy::n_p(uint32_t queue, uint8_t class_id, const BufferView& view) const noexcept {
  return congested_queues(queue, env().group_of_class(class_id), view);
}

double FbPolicy::share(uint32_t queue, const BufferView& view) const noexcept {
  return scheduler_share(queue, env(), view);
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

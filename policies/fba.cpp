#include "policies/fba.h"

#include <algorithm>
#include <cmath>

#include "policies/fb_factors.h"

namespace sharebuf::policies {

FbaPolicy::FbaPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_high_ = reader.number("alpha_high");
  alpha_low_ = reader.number("alpha_low");
  period_ms_ = reader.number("period_ms");
  set_params(reader.values());
  period_ns_ = static_cast<uint64_t>(period_ms_ * 1e6);
  alphas_ = resolve_group_alphas(env, alpha_high_, alpha_low_);
  const uint32_t n = env.layout->num_queues();
  alpha_dt_ = std::make_unique<std::atomic<double>[]>(n);
  for (uint32_t q = 0; q < n; ++q)
    alpha_dt_[q].store(alphas_[env.class_of_queue(q)], std::memory_order_relaxed);
}

void FbaPolicy::maybe_update(uint64_t now_ns, const BufferView& view) noexcept {
  uint64_t due = next_update_ns_.load(std::memory_order_relaxed);
  if (now_ns < due) return;
  if (!next_update_ns_.compare_exchange_strong(due, now_ns + period_ns_, std::memory_order_relaxed))
    return;  // another worker is updating
  recompute(view);
}

void FbaPolicy::recompute(const BufferView& view) noexcept {
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    const uint8_t c = env().class_of_queue(q);
    const double alpha = alphas_[c] * scheduler_share(q, env(), view) /
                         congested_queues(q, env().group_of_class(c), view);
    alpha_dt_[q].store(alpha, std::memory_order_relaxed);
  }
  updates_.fetch_add(1, std::memory_order_relaxed);
}

uint32_t FbaPolicy::threshold_cells(uint32_t queue, uint8_t /*class_id*/,
                                    const BufferView& view) const noexcept {
  return static_cast<uint32_t>(std::min<double>(
      std::ceil(queue_alpha(queue) * view.remaining_cells()), view.capacity_cells()));
}

nlohmann::json FbaPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json alphas = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q)
    alphas.push_back(queue_alpha(q));
  d["state"]["queue_alphas"] = alphas;
  d["state"]["updates"] = updates();
  return d;
}

}  // namespace sharebuf::policies

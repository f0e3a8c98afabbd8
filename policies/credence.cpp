#include "policies/credence.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace sharebuf::policies {

CredencePolicy::CredencePolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  const std::string oracle = reader.choice("oracle", "none", {"none", "forest", "flip"});
  oracle_ = oracle == "forest" ? Oracle::kForest : oracle == "flip" ? Oracle::kFlip : Oracle::kNone;
  flip_over_forest_ = reader.choice("flip_base", "none", {"none", "forest"}) == "forest";
  flip_probability_ = reader.number("flip_probability", 0, 0, 1);
  seed_ = reader.integer("seed", 1, 0, UINT64_MAX);
  base_rtt_ns_ = reader.number("base_rtt_us", 10, 0.001, 1e6) * 1000;
  safeguard_ = reader.boolean("safeguard", true);
  reset_on_empty_ = reader.boolean("reset_on_empty", false);
  const bool needs_forest =
      oracle_ == Oracle::kForest || (oracle_ == Oracle::kFlip && flip_over_forest_);
  const auto* model = params.values.contains("model") ? &params.values.at("model") : nullptr;
  if (model != nullptr) {
    if (!model->is_string()) reader.fail("model", "must be a file path (a string)");
    model_path_ = model->get<std::string>();
  }
  if (needs_forest) {
    if (model_path_.empty()) reader.fail("model", "is required with a forest oracle");
    forest_ = RandomForest::from_file(model_path_);
  }
  const uint32_t n = env.layout->num_queues();
  t_.assign(n, 0);
  last_ns_.assign(n, 0);
  ewma_queue_.assign(n, 0);
  rng_.seed(seed_);
}

void CredencePolicy::on_install(const BufferView& view) noexcept {
  std::lock_guard guard(lock_);
  gamma_ = 0;
  for (uint32_t q = 0; q < t_.size(); ++q) {
    t_[q] = view.queue_cells(q);
    gamma_ += t_[q];
  }
}

void CredencePolicy::drain_one(uint32_t q, uint64_t now_ns, const BufferView& view) noexcept {
  const uint64_t last = last_ns_[q];
  last_ns_[q] = now_ns;
  if (t_[q] <= 0 || now_ns <= last || last == 0 || view.queue_cells(q) != 0) return;
  const double drained = std::min(t_[q], static_cast<double>(now_ns - last) * 1e-9 *
                                             env().rate_cells_per_s(view.layout().port_of(q)));
  t_[q] -= drained;
  gamma_ -= drained;
}

bool CredencePolicy::predict_drop(uint32_t queue, const BufferView& view) noexcept {
  if (oracle_ == Oracle::kNone) return false;
  bool drop = false;
  if (forest_ && (oracle_ == Oracle::kForest || flip_over_forest_)) {
    const double features[kOracleFeatures] = {static_cast<double>(view.queue_cells(queue)),
                                              static_cast<double>(view.total_cells()),
                                              ewma_queue_[queue], ewma_total_};
    drop = forest_->predicts_drop(features);
  }
  if (oracle_ == Oracle::kFlip && coin_(rng_) < flip_probability_) drop = !drop;
  return drop;
}

Verdict CredencePolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  std::lock_guard guard(lock_);
  const uint32_t n = static_cast<uint32_t>(t_.size());
  const double capacity = view.capacity_cells();
  // Idle thresholds drain lazily: the arriving queue's now, the others only when Gamma says the
  // virtual buffer is full (then every threshold must be current to find the highest). Gamma is
  // never below the drained sum, so a stale Gamma can only send us to the full pass early.
  drain_one(ctx.queue, ctx.now_ns, view);

  // Features: EWMAs of the queue length and the occupancy over one base RTT.
  const double w =
      ewma_ns_ == 0
          ? 1.0
          : std::min(1.0, static_cast<double>(ctx.now_ns - std::min(ctx.now_ns, ewma_ns_)) /
                              base_rtt_ns_);
  ewma_ns_ = ctx.now_ns;
  ewma_queue_[ctx.queue] += w * (view.queue_cells(ctx.queue) - ewma_queue_[ctx.queue]);
  ewma_total_ += w * (view.total_cells() - ewma_total_);

  // 1. Thresholds follow LQD's queue lengths. When the virtual buffer looks full, one pass
  // brings every threshold up to date, finds the highest, and the longest real queue for step 2.
  const double c = ctx.cells;
  const uint32_t i = ctx.queue;
  uint32_t longest = UINT32_MAX;  // unknown
  if (gamma_ + c > capacity) {
    uint32_t j = i;
    longest = 0;
    for (uint32_t q = 0; q < n; ++q) {
      drain_one(q, ctx.now_ns, view);
      if (t_[q] > t_[j]) j = q;
      longest = std::max(longest, view.queue_cells(q));
    }
    if (gamma_ + c > capacity) {
      const double taken = std::min(c, t_[j]);
      t_[j] -= taken;
      gamma_ -= taken;
    }
  }
  t_[i] += c;
  gamma_ += c;

  // 2. Safeguard: no queue is long enough for LQD to push anything out of it.
  // The scan is skipped when its answer is known: the arrival's queue is at B/N already, or the
  // whole buffer holds less than B/N, or step 1 found the longest queue.
  const double fair = capacity / n;
  if (safeguard_ && view.queue_cells(i) < fair) {
    bool below = view.total_cells() < fair;
    if (!below) {
      if (longest == UINT32_MAX) {
        longest = 0;
        for (uint32_t q = 0; q < n; ++q)
          longest = std::max(longest, view.queue_cells(q));
      }
      below = longest < fair;
    }
    if (below) return Verdict::accept();
  }
  // 3. Under the threshold and fits: the oracle decides.
  if (view.queue_cells(i) < t_[i] && ctx.cells <= view.remaining_cells()) {
    return predict_drop(i, view) ? Verdict::drop(DropReason::kPrediction) : Verdict::accept();
  }
  return Verdict::drop(DropReason::kThreshold);
}

void CredencePolicy::on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept {
  std::lock_guard guard(lock_);
  const double taken = std::min<double>(ev.cells, t_[ev.queue]);
  t_[ev.queue] -= taken;
  gamma_ -= taken;
  if (reset_on_empty_ && view.queue_cells(ev.queue) == 0) {
    gamma_ -= t_[ev.queue];
    t_[ev.queue] = 0;
  }
}

double CredencePolicy::threshold(uint32_t queue) const noexcept {
  std::lock_guard guard(lock_);
  return t_[queue];
}

double CredencePolicy::gamma() const noexcept {
  std::lock_guard guard(lock_);
  return gamma_;
}

uint32_t CredencePolicy::threshold_cells(uint32_t queue, uint8_t,
                                         const BufferView&) const noexcept {
  return static_cast<uint32_t>(std::ceil(std::max(0.0, threshold(queue))));
}

nlohmann::json CredencePolicy::params() const {
  nlohmann::json p = {{"oracle", oracle_ == Oracle::kForest ? "forest"
                                 : oracle_ == Oracle::kFlip ? "flip"
                                                            : "none"},
                      {"flip_probability", flip_probability_},
                      {"flip_base", flip_over_forest_ ? "forest" : "none"},
                      {"seed", seed_},
                      {"base_rtt_us", base_rtt_ns_ / 1000},
                      {"safeguard", safeguard_},
                      {"reset_on_empty", reset_on_empty_},
                      {"model", model_path_}};
  return p;
}

nlohmann::json CredencePolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  std::lock_guard guard(lock_);
  d["state"]["lqd_thresholds_cells"] = t_;
  d["state"]["gamma_cells"] = gamma_;
  d["state"]["feature_ewma_total_cells"] = ewma_total_;
  if (forest_) d["state"]["forest"] = {{"trees", forest_->trees()}, {"nodes", forest_->nodes()}};
  return d;
}

}  // namespace sharebuf::policies

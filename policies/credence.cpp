#include "policies/credence.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>

#include "common/data_files.h"

namespace sharebuf::policies {

CredencePolicy::CredencePolicy(const Params& params, const PolicyEnv& env)
    : Policy(env), t_(env.layout->num_queues()), features_(env.layout->num_queues(), 10'000) {
  ParamReader reader(kName, params, kParams);
  const std::string oracle = reader.choice("oracle");
  oracle_ = oracle == "forest"    ? Oracle::kForest
            : oracle == "flip"    ? Oracle::kFlip
            : oracle == "perfect" ? Oracle::kPerfect
                                  : Oracle::kNone;
  const std::string flip_base = reader.choice("flip_base");
  flip_over_forest_ = flip_base == "forest";
  flip_over_perfect_ = flip_base == "perfect";
  const bool needs_labels =
      oracle_ == Oracle::kPerfect || (oracle_ == Oracle::kFlip && flip_over_perfect_);
  if (needs_labels && !env.oracle_labels) {
    reader.fail(oracle_ == Oracle::kPerfect ? "oracle" : "flip_base",
                "\"perfect\" answers from LQD's fate of the same arrivals, which only "
                "sharebuf-replay knows");
  }
  flip_probability_ = reader.number("flip_probability");
  seed_ = reader.integer("seed");
  base_rtt_ns_ = reader.number("base_rtt_us") * 1000;
  features_ = CredenceFeatures(env.layout->num_queues(), base_rtt_ns_);
  safeguard_ = reader.boolean("safeguard");
  reset_on_empty_ = reader.boolean("reset_on_empty");
  const bool needs_forest =
      oracle_ == Oracle::kForest || (oracle_ == Oracle::kFlip && flip_over_forest_);
  if (const auto model = reader.text("model")) model_path_ = *model;
  if (needs_forest) {
    if (model_path_.empty()) model_path_ = common::data_file("credence-forest.json");
    forest_ = RandomForest::from_file(model_path_);
  }
  nlohmann::json values = reader.values();
  values["model"] = model_path_;  // the file actually loaded (the shipped one by default)
  set_params(std::move(values));
  const uint32_t n = env.layout->num_queues();
  for (uint32_t q = 0; q < n; ++q)
    t_.set(q, 0);
  uint32_t widest = 1;
  for (uint32_t p = 0; p < env.layout->num_ports(); ++p) {
    rate_units_per_ns_.push_back(env.rate_cells_per_s(p) * 1e-9 *
                                 static_cast<double>(kUnitsPerCell));
    widest = std::max(widest, env.layout->queues_on_port(p));
    const PortScheduling* sched =
        p < env.port_scheduling.size() ? &env.port_scheduling[p] : nullptr;
    port_kind_.push_back(sched != nullptr ? sched->kind : SchedulingKind::kRoundRobin);
    for (uint32_t k = 0; k < env.layout->queues_on_port(p); ++k) {
      weight_.push_back(sched != nullptr && k < sched->weights.size() && sched->weights[k] > 0
                            ? static_cast<double>(sched->weights[k])
                            : 1.0);
    }
  }
  port_last_ns_.assign(env.layout->num_ports(), 0);
  port_draining_.assign(env.layout->num_ports(), 0);
  draining_.assign((n + 63) / 64, 0);
  fill_queue_.resize(widest);
  fill_left_.resize(widest);
  rng_.seed(seed_);
}

void CredencePolicy::on_install(const BufferView& view) noexcept {
  std::lock_guard guard(lock_);
  gamma_ = 0;
  std::fill(port_last_ns_.begin(), port_last_ns_.end(), 0);
  for (uint32_t q = 0; q < t_.size(); ++q) {
    t_.set(q, uint64_t{view.queue_cells(q)} << kFractionBits);
    gamma_ += t_[q];
    mark_draining(q);
  }
}

// LQD's virtual queues keep being served while Credence's real ones are empty: since port p's
// last event, its port has sent `rate * elapsed` in total, shared among its queues that hold a
// threshold by the port's scheduler (strict priority: in order, a busy real queue takes the rest;
// round robin and DRR: by weight, water-filling, so a queue that drains to 0 passes its share
// on). An idle real queue's share lowers its T; a busy real queue's share is what its real
// departures take, and those lower its T in on_dequeue(). So k idle queues of one port drain
// together at one line rate, not k.
[[gnu::always_inline]] inline void CredencePolicy::drain_port(uint32_t p, uint64_t now_ns,
                                                              const BufferView& view) noexcept {
  // The common cases, inline: no time passed, or nothing of this port drains.
  uint64_t& last = port_last_ns_[p];
  if (now_ns <= last || last == 0) {
    if (last == 0) last = now_ns;
    return;
  }
  const uint64_t elapsed = now_ns - last;
  last = now_ns;
  if (port_draining_[p] != 0) drain_port_slow(p, elapsed, view);
}

void CredencePolicy::drain_port_slow(uint32_t p, uint64_t elapsed,
                                     const BufferView& view) noexcept {
  double budget = static_cast<double>(elapsed) * rate_units_per_ns_[p];
  const BufferLayout& layout = view.layout();
  const uint32_t first = layout.first_queue(p);
  const uint32_t n = layout.queues_on_port(p);
  if (port_kind_[p] == SchedulingKind::kStrictPriority) {
    for (uint32_t q = first; q < first + n && budget > 0; ++q) {
      const uint64_t t = t_[q];
      if (t == 0) continue;
      if (view.queue_cells(q) != 0) break;  // the port serves this one
      const double d = std::min(static_cast<double>(t), budget);
      budget -= d;
      lower_threshold(q, d);
    }
  } else {
    uint32_t idle = 0;
    double busy_weight = 0;
    for (uint32_t q = first; q < first + n; ++q) {
      if (t_[q] == 0) continue;
      if (view.queue_cells(q) != 0) {
        busy_weight += weight_[q];
      } else {
        fill_queue_[idle] = q;
        fill_left_[idle++] = static_cast<double>(t_[q]);
      }
    }
    while (budget > 0 && idle > 0) {
      double w_sum = busy_weight;
      double until_first_empty = budget;  // budget the port spends until an idle queue is empty
      for (uint32_t i = 0; i < idle; ++i) {
        const double w = weight_[fill_queue_[i]];
        w_sum += w;
      }
      for (uint32_t i = 0; i < idle; ++i) {
        until_first_empty =
            std::min(until_first_empty, fill_left_[i] * w_sum / weight_[fill_queue_[i]]);
      }
      uint32_t kept = 0;
      for (uint32_t i = 0; i < idle; ++i) {
        const double share = until_first_empty * weight_[fill_queue_[i]] / w_sum;
        fill_left_[i] -= share;
        if (fill_left_[i] > 0.5) {  // at least half a unit left: still draining
          fill_queue_[kept] = fill_queue_[i];
          fill_left_[kept++] = fill_left_[i];
        } else {
          fill_left_[i] = 0;
          set_threshold(fill_queue_[i], 0);
        }
      }
      for (uint32_t i = 0; i < kept; ++i)
        set_threshold(fill_queue_[i], static_cast<uint64_t>(std::llround(fill_left_[i])));
      budget -= until_first_empty;
      idle = kept;
    }
  }
  // Queues that no longer drain leave the set: T is 0, or the real queue is busy (its departures
  // lower T; on_dequeue() puts it back when it empties).
  for (uint32_t q = first; q < first + n; ++q) {
    if (t_[q] == 0 || view.queue_cells(q) != 0) unmark_draining(q);
  }
}

void CredencePolicy::lower_threshold(uint32_t q, double units) noexcept {
  const uint64_t t = t_[q];
  set_threshold(
      q, units >= static_cast<double>(t) ? 0 : t - static_cast<uint64_t>(std::llround(units)));
}

void CredencePolicy::drain_all(uint64_t now_ns, const BufferView& view) noexcept {
  if (now_ns == drained_all_ns_) return;  // nothing drains within one instant
  drained_all_ns_ = now_ns;
  for (uint32_t p = 0; p < port_draining_.size(); ++p) {
    if (port_draining_[p] != 0) drain_port(p, now_ns, view);
  }
}

// The base oracle's answer; flip is applied by the caller. Reads only immutable state, so it runs
// outside the critical section.
bool CredencePolicy::predict_drop(const ArrivalContext& ctx,
                                  const double (&features)[kOracleFeatures]) const noexcept {
  if (oracle_ == Oracle::kPerfect || flip_over_perfect_) {
    const auto& labels = *env().oracle_labels;
    return ctx.seq < labels.size() && labels[ctx.seq] != 0;
  }
  return forest_ && forest_->predicts_drop(features);
}

namespace {
// One per thread: its address names the thread holding a Credence lock for a burst.
thread_local char burst_token;
}  // namespace

void CredencePolicy::begin_burst() noexcept {
  lock_.lock();
  burst_owner_.store(&burst_token, std::memory_order_relaxed);
}

void CredencePolicy::end_burst() noexcept {
  burst_owner_.store(nullptr, std::memory_order_relaxed);
  lock_.unlock();
}

Verdict CredencePolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  double features[kOracleFeatures];
  bool flip = false;
  bool ask_oracle = false;
  Verdict verdict;
  // Only this thread ever stores its own token, so it reads it back exactly when it holds lock_
  // for a burst.
  if (burst_owner_.load(std::memory_order_relaxed) == &burst_token) {
    verdict = decide_locked(ctx, view, features, flip, ask_oracle);
  } else {
    std::lock_guard guard(lock_);
    verdict = decide_locked(ctx, view, features, flip, ask_oracle);
  }
  if (!ask_oracle) return verdict;
  // 3. (continued) The oracle's answer is a pure function of the features snapshotted under the
  // lock, so computing it here gives the same verdict and keeps the critical section short.
  return predict_drop(ctx, features) != flip ? Verdict::drop(DropReason::kPrediction)
                                             : Verdict::accept();
}

// Steps 1, 2, 4 and the oracle's coin, under lock_. Returns the verdict; when the oracle has the
// last word, sets ask_oracle and fills its features and whether to flip its answer. (A plain
// Verdict and a flag, not std::optional<Verdict>: the optional came back through the stack with a
// byte store inside a wider load, a store-forwarding stall that was a third of the decision.)
[[gnu::always_inline]] inline Verdict CredencePolicy::decide_locked(
    const ArrivalContext& ctx, const BufferView& view, double (&features)[kOracleFeatures],
    bool& flip, bool& ask_oracle) noexcept {
  const uint64_t capacity = uint64_t{view.capacity_cells()} << kFractionBits;
  // Idle thresholds drain lazily: the arriving queue's port now, the other ports only when Gamma
  // says the virtual buffer is full (then every threshold must be current to find the highest).
  // Gamma is never below the drained sum, so a stale Gamma can only send us to the full pass
  // early.
  drain_port(view.layout().port_of(ctx.queue), ctx.now_ns, view);

  // Features (only a forest reads them), updated on every arrival as the trace writer does.
  if (forest_) {
    features_.observe(ctx.now_ns, ctx.queue, view.queue_cells(ctx.queue), view.total_cells(),
                      features);
  }

  // 1. Thresholds follow LQD's queue lengths. When the virtual buffer looks full, every draining
  // threshold is brought up to date first (Gamma may have been stale), then the highest gives way.
  const uint64_t c = uint64_t{ctx.cells} << kFractionBits;
  const uint32_t i = ctx.queue;
  if (gamma_ + c > capacity) {
    drain_all(ctx.now_ns, view);
    if (gamma_ + c > capacity) {
      const uint32_t j = t_[i] >= t_.max() ? i : t_.argmax();
      if (j == i) {
        set_threshold(i, t_[i] - std::min(c, t_[i]) + c);
      } else {
        set_threshold(j, t_[j] - std::min(c, t_[j]));
        set_threshold(i, t_[i] + c);
      }
    } else {
      set_threshold(i, t_[i] + c);
    }
  } else {
    set_threshold(i, t_[i] + c);
  }
  // An empty real queue: in case the frame is refused and the queue stays empty, T[i] drains. A
  // busy queue's T falls with its departures, and on_dequeue marks it when it empties.
  if (view.queue_cells(i) == 0) mark_draining(i);

  // 2. Safeguard: no queue is long enough for LQD to push anything out of it.
  if (safeguard_ && view.long_queues() == 0) return Verdict::accept();
  // 4. Does not fit (pool_full), or over the threshold.
  if (ctx.cells > view.remaining_cells()) return Verdict::drop(DropReason::kPoolFull);
  if ((uint64_t{view.queue_cells(i)} << kFractionBits) >= t_[i])
    return Verdict::drop(DropReason::kThreshold);
  // 3. Under the threshold and fits: the oracle decides (its coin drawn here, in arrival order).
  if (oracle_ == Oracle::kNone) return Verdict::accept();
  if (oracle_ == Oracle::kFlip) flip = coin_(rng_) < flip_probability_;
  ask_oracle = true;
  return Verdict::accept();
}

void CredencePolicy::on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept {
  std::lock_guard guard(lock_);
  const uint32_t q = ev.queue;
  // The port's idle queues drained until now under the old set of busy queues.
  drain_port(view.layout().port_of(q), ev.now_ns, view);
  uint64_t t = t_[q] - std::min(uint64_t{ev.cells} << kFractionBits, t_[q]);
  if (view.queue_cells(q) == 0) {
    if (reset_on_empty_) t = 0;
    mark_draining(q);  // LQD's queue drains on from here
  }
  set_threshold(q, t);
}

double CredencePolicy::threshold(uint32_t queue) const noexcept {
  std::lock_guard guard(lock_);
  return static_cast<double>(t_[queue]) / kUnitsPerCell;
}

double CredencePolicy::gamma() const noexcept {
  std::lock_guard guard(lock_);
  return static_cast<double>(gamma_) / kUnitsPerCell;
}

uint32_t CredencePolicy::threshold_cells(uint32_t queue, uint8_t,
                                         const BufferView&) const noexcept {
  std::lock_guard guard(lock_);
  return static_cast<uint32_t>((t_[queue] + kUnitsPerCell - 1) >> kFractionBits);
}

nlohmann::json CredencePolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  std::lock_guard guard(lock_);
  nlohmann::json t = nlohmann::json::array();
  for (uint32_t q = 0; q < t_.size(); ++q)
    t.push_back(static_cast<double>(t_[q]) / kUnitsPerCell);
  d["state"]["lqd_thresholds_cells"] = t;
  d["state"]["gamma_cells"] = static_cast<double>(gamma_) / kUnitsPerCell;
  d["state"]["feature_ewma_total_cells"] = features_.ewma_total();
  if (forest_) {
    d["state"]["forest"] = {{"trees", forest_->trees()},
                            {"nodes", forest_->nodes()},
                            {"depth", forest_->depth()},
                            {"kernel", forest_->kernel()}};
  }
  return d;
}

}  // namespace sharebuf::policies

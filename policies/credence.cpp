#include "policies/credence.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>

#include "common/data_files.h"

namespace sharebuf::policies {

void CredencePolicy::Pipe::init(uint32_t queues, uint32_t ports, uint32_t widest,
                                double base_rtt_ns, uint64_t seed) {
  t = MaxTree(queues);
  port_last_ns.assign(ports, 0);
  draining.assign((queues + 63) / 64, 0);
  port_draining.assign(ports, 0);
  fill_queue.resize(widest);
  fill_left.resize(widest);
  features = CredenceFeatures(queues, base_rtt_ns);
  rng.seed(seed);
}

CredencePolicy::CredencePolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
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
  safeguard_ = reader.boolean("safeguard");
  reset_on_empty_ = reader.boolean("reset_on_empty");
  pipelines_ = static_cast<uint32_t>(reader.integer("pipelines"));
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
  const uint32_t ports = env.layout->num_ports();
  uint32_t widest = 1;
  for (uint32_t p = 0; p < ports; ++p) {
    // P pipelines' virtual queues of one port share its line rate.
    rate_units_per_ns_.push_back(env.rate_cells_per_s(p) * 1e-9 *
                                 static_cast<double>(kUnitsPerCell) / pipelines_);
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
  // Each pipeline flips its own coins; pipeline 0's are the one-pipeline policy's.
  pipes_ = std::make_unique<Pipe[]>(pipelines_);
  for (uint32_t p = 0; p < ports; ++p)
    pipe_of_port_.push_back(static_cast<uint8_t>(p % pipelines_));
  for (uint32_t k = 0; k < pipelines_; ++k) {
    pipes_[k].init(n, ports, widest, base_rtt_ns_, seed_ + k * 0x9e3779b97f4a7c15ull);
    if (pipelines_ > 1) pipes_[k].own_cells.assign(n, 0);
  }
}

void CredencePolicy::on_install(const BufferView& view) noexcept {
  // The frames already queued: whose pipeline admitted them is not known, so pipeline 0 takes
  // them all (a departure charged to another pipeline lowers what that one has, never below 0).
  for (uint32_t k = 0; k < pipelines_; ++k) {
    Pipe& pipe = pipes_[k];
    std::lock_guard guard(pipe.lock);
    pipe.gamma = 0;
    std::fill(pipe.port_last_ns.begin(), pipe.port_last_ns.end(), 0);
    for (uint32_t q = 0; q < pipe.t.size(); ++q) {
      const uint32_t cells = k == 0 ? view.queue_cells(q) : 0;
      pipe.t.set(q, uint64_t{cells} << kFractionBits);
      pipe.gamma += pipe.t[q];
      if (pipelines_ > 1) pipe.own_cells[q] = cells;
      mark_draining(pipe, q);
    }
    pipe.published.gamma.store(pipe.gamma, std::memory_order_relaxed);
  }
}

// LQD's virtual queues keep being served while Credence's real ones are empty: since port p's
// last event, its port has sent `rate * elapsed` in total, shared among its queues that hold a
// threshold by the port's scheduler (strict priority: in order, a busy real queue takes the rest;
// round robin and DRR: by weight, water-filling, so a queue that drains to 0 passes its share
// on). An idle real queue's share lowers its T; a busy real queue's share is what its real
// departures take, and those lower its T in on_dequeue(). So k idle queues of one port drain
// together at one line rate, not k. (With P pipelines, "real queue" is the cells the pipeline put
// there, and each drains at the rate over P.)
[[gnu::always_inline]] inline void CredencePolicy::drain_port(Pipe& pipe, uint32_t p,
                                                              uint64_t now_ns,
                                                              const BufferView& view) noexcept {
  // The common cases, inline: no time passed, or nothing of this port drains.
  uint64_t& last = pipe.port_last_ns[p];
  if (now_ns <= last || last == 0) {
    if (last == 0) last = now_ns;
    return;
  }
  const uint64_t elapsed = now_ns - last;
  last = now_ns;
  if (pipe.port_draining[p] != 0) drain_port_slow(pipe, p, elapsed, view);
}

void CredencePolicy::drain_port_slow(Pipe& pipe, uint32_t p, uint64_t elapsed,
                                     const BufferView& view) noexcept {
  double budget = static_cast<double>(elapsed) * rate_units_per_ns_[p];
  const BufferLayout& layout = view.layout();
  const uint32_t first = layout.first_queue(p);
  const uint32_t n = layout.queues_on_port(p);
  MaxTree& t = pipe.t;
  if (port_kind_[p] == SchedulingKind::kStrictPriority) {
    for (uint32_t q = first; q < first + n && budget > 0; ++q) {
      const uint64_t tq = t[q];
      if (tq == 0) continue;
      if (cells_of(pipe, q, view) != 0) break;  // the port serves this one
      const double d = std::min(static_cast<double>(tq), budget);
      budget -= d;
      lower_threshold(pipe, q, d);
    }
  } else {
    uint32_t idle = 0;
    double busy_weight = 0;
    auto& fill_queue = pipe.fill_queue;
    auto& fill_left = pipe.fill_left;
    for (uint32_t q = first; q < first + n; ++q) {
      if (t[q] == 0) continue;
      if (cells_of(pipe, q, view) != 0) {
        busy_weight += weight_[q];
      } else {
        fill_queue[idle] = q;
        fill_left[idle++] = static_cast<double>(t[q]);
      }
    }
    while (budget > 0 && idle > 0) {
      double w_sum = busy_weight;
      double until_first_empty = budget;  // budget the port spends until an idle queue is empty
      for (uint32_t i = 0; i < idle; ++i) {
        const double w = weight_[fill_queue[i]];
        w_sum += w;
      }
      for (uint32_t i = 0; i < idle; ++i) {
        until_first_empty =
            std::min(until_first_empty, fill_left[i] * w_sum / weight_[fill_queue[i]]);
      }
      uint32_t kept = 0;
      for (uint32_t i = 0; i < idle; ++i) {
        const double share = until_first_empty * weight_[fill_queue[i]] / w_sum;
        fill_left[i] -= share;
        if (fill_left[i] > 0.5) {  // at least half a unit left: still draining
          fill_queue[kept] = fill_queue[i];
          fill_left[kept++] = fill_left[i];
        } else {
          fill_left[i] = 0;
          set_threshold(pipe, fill_queue[i], 0);
        }
      }
      for (uint32_t i = 0; i < kept; ++i)
        set_threshold(pipe, fill_queue[i], static_cast<uint64_t>(std::llround(fill_left[i])));
      budget -= until_first_empty;
      idle = kept;
    }
  }
  // Queues that no longer drain leave the set: T is 0, or the real queue is busy (its departures
  // lower T; on_dequeue() puts it back when it empties).
  for (uint32_t q = first; q < first + n; ++q) {
    if (t[q] == 0 || cells_of(pipe, q, view) != 0) unmark_draining(pipe, q);
  }
}

void CredencePolicy::lower_threshold(Pipe& pipe, uint32_t q, double units) noexcept {
  const uint64_t t = pipe.t[q];
  set_threshold(
      pipe, q,
      units >= static_cast<double>(t) ? 0 : t - static_cast<uint64_t>(std::llround(units)));
}

void CredencePolicy::drain_all(Pipe& pipe, uint64_t now_ns, const BufferView& view) noexcept {
  if (now_ns == pipe.drained_all_ns) return;  // nothing drains within one instant
  pipe.drained_all_ns = now_ns;
  for (uint32_t p = 0; p < pipe.port_draining.size(); ++p) {
    if (pipe.port_draining[p] != 0) drain_port(pipe, p, now_ns, view);
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

// Taking a pipeline's lock also reads what the other pipelines published (one load of each other
// pipeline's line per lock hold: once per burst in an RX worker).
void CredencePolicy::acquire(Pipe& pipe) const noexcept {
  pipe.lock.lock();
  pipe.looked_for_idle = false;
  if (pipelines_ == 1) return;
  uint64_t others = 0;
  for (uint32_t k = 0; k < pipelines_; ++k) {
    if (&pipes_[k] != &pipe) others += pipes_[k].published.gamma.load(std::memory_order_relaxed);
  }
  pipe.others = others;
}

void CredencePolicy::release(Pipe& pipe) const noexcept {
  if (pipelines_ > 1) {
    if (pipe.published.gamma.load(std::memory_order_relaxed) != pipe.gamma)
      pipe.published.gamma.store(pipe.gamma, std::memory_order_relaxed);
    if (static_cast<double>(pipe.last_ns) >=
        static_cast<double>(pipe.published_ns) + base_rtt_ns_ / 2) {
      pipe.published_ns = pipe.last_ns;
      pipe.published.ns.store(pipe.last_ns, std::memory_order_relaxed);
    }
  }
  pipe.lock.unlock();
}

// A pipeline with no event for a base RTT or more drains its thresholds nowhere (it drains lazily,
// at its own events), so what it published would hold the others' virtual buffer down for as long
// as it stays idle: the first pipeline that finds the buffer full in a lock hold drains it, if its
// lock is free (never waits: it already holds its own).
void CredencePolicy::drain_idle_pipes(Pipe& pipe, uint64_t now_ns,
                                      const BufferView& view) noexcept {
  pipe.looked_for_idle = true;
  uint64_t others = 0;
  for (uint32_t k = 0; k < pipelines_; ++k) {
    Pipe& other = pipes_[k];
    if (&other == &pipe) continue;
    const uint64_t published = other.published.gamma.load(std::memory_order_relaxed);
    const uint64_t seen = other.published.ns.load(std::memory_order_relaxed);
    // `seen` lags the other's latest event by up to half a base RTT (release()).
    if (published != 0 &&
        static_cast<double>(now_ns) > static_cast<double>(seen) + 1.5 * base_rtt_ns_ &&
        other.lock.try_lock()) {
      drain_all(other, now_ns, view);
      other.last_ns = std::max(other.last_ns, now_ns);
      other.published.gamma.store(other.gamma, std::memory_order_relaxed);
      others += other.gamma;
      other.lock.unlock();
    } else {
      others += published;
    }
  }
  pipe.others = others;
}

namespace {
// Per thread: the Credence instance whose burst it is in, and the pipeline lock it holds for it.
struct BurstHold {
  const void* policy = nullptr;
  void* pipe = nullptr;
};
thread_local BurstHold burst_hold;
}  // namespace

void CredencePolicy::begin_burst() noexcept {
  burst_hold = {this, nullptr};
}

void CredencePolicy::end_burst() noexcept {
  if (burst_hold.policy == this && burst_hold.pipe != nullptr)
    release(*static_cast<Pipe*>(burst_hold.pipe));
  burst_hold = {};
}

Verdict CredencePolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  if (pipelines_ == 1) return admit_in<false>(pipes_[0], ctx, view);
  return admit_in<true>(pipe_of(ctx.in_port), ctx, view);
}

template <bool kPipes>
[[gnu::always_inline]] inline Verdict CredencePolicy::admit_in(Pipe& pipe,
                                                               const ArrivalContext& ctx,
                                                               const BufferView& view) noexcept {
  double features[kOracleFeatures];
  bool flip = false;
  bool ask_oracle = false;
  Verdict verdict;
  if (burst_hold.policy == this) {
    // In a burst: keep the lock across its decisions; an arrival of another pipeline swaps it.
    if (burst_hold.pipe != &pipe) {
      if (burst_hold.pipe != nullptr) release(*static_cast<Pipe*>(burst_hold.pipe));
      acquire(pipe);
      burst_hold.pipe = &pipe;
    }
    verdict = decide_locked<kPipes>(pipe, ctx, view, features, flip, ask_oracle);
  } else {
    acquire(pipe);
    verdict = decide_locked<kPipes>(pipe, ctx, view, features, flip, ask_oracle);
    release(pipe);
  }
  if (!ask_oracle) return verdict;
  // 3. (continued) The oracle's answer is a pure function of the features snapshotted under the
  // lock, so computing it here gives the same verdict and keeps the critical section short.
  return predict_drop(ctx, features) != flip ? Verdict::drop(DropReason::kPrediction)
                                             : Verdict::accept();
}

// Steps 1, 2, 4 and the oracle's coin, under the pipeline's lock. Returns the verdict; when the
// oracle has the last word, sets ask_oracle and fills its features and whether to flip its answer.
// (A plain Verdict and a flag, not std::optional<Verdict>: the optional came back through the
// stack with a byte store inside a wider load, a store-forwarding stall that was a third of the
// decision.)
template <bool kPipes>
[[gnu::always_inline]] inline Verdict CredencePolicy::decide_locked(
    Pipe& pipe, const ArrivalContext& ctx, const BufferView& view,
    double (&features)[kOracleFeatures], bool& flip, bool& ask_oracle) noexcept {
  const uint64_t capacity = uint64_t{view.capacity_cells()} << kFractionBits;
  MaxTree& t = pipe.t;
  if constexpr (kPipes) pipe.last_ns = std::max(pipe.last_ns, ctx.now_ns);
  // Idle thresholds drain lazily: the arriving queue's port now, the other ports only when Gamma
  // says the virtual buffer is full (then every threshold must be current to find the highest).
  // Gamma is never below the drained sum, so a stale Gamma can only send us to the full pass
  // early.
  drain_port(pipe, view.layout().port_of(ctx.queue), ctx.now_ns, view);

  // Features (only a forest reads them), updated on every arrival as the trace writer does.
  if (forest_) {
    pipe.features.observe(ctx.now_ns, ctx.queue, view.queue_cells(ctx.queue), view.total_cells(),
                          features);
  }

  // 1. Thresholds follow LQD's queue lengths. When the virtual buffer looks full, every draining
  // threshold is brought up to date first (Gamma may have been stale), then the highest gives way.
  // With pipelines, the others' Gamma counts against the buffer too.
  const uint64_t c = uint64_t{ctx.cells} << kFractionBits;
  const uint32_t i = ctx.queue;
  const uint64_t room = kPipes ? capacity - std::min(capacity, pipe.others) : capacity;
  if (pipe.gamma + c > room) {
    drain_all(pipe, ctx.now_ns, view);
    uint64_t now_room = room;
    if constexpr (kPipes) {
      if (!pipe.looked_for_idle && pipe.others != 0) {
        drain_idle_pipes(pipe, ctx.now_ns, view);
        now_room = capacity - std::min(capacity, pipe.others);
      }
    }
    if (pipe.gamma + c > now_room) {
      const uint32_t j = t[i] >= t.max() ? i : t.argmax();
      if (j == i) {
        set_threshold(pipe, i, t[i] - std::min(c, t[i]) + c);
      } else {
        set_threshold(pipe, j, t[j] - std::min(c, t[j]));
        set_threshold(pipe, i, t[i] + c);
      }
    } else {
      set_threshold(pipe, i, t[i] + c);
    }
  } else {
    set_threshold(pipe, i, t[i] + c);
  }
  // An empty real queue: in case the frame is refused and the queue stays empty, T[i] drains. A
  // busy queue's T falls with its departures, and on_dequeue marks it when it empties.
  const uint32_t q_cells =
      kPipes ? std::min(view.queue_cells(i), pipe.own_cells[i]) : view.queue_cells(i);
  if (q_cells == 0) mark_draining(pipe, i);

  // 2. Safeguard: no queue is long enough for LQD to push anything out of it.
  if (safeguard_ && view.long_queues() == 0) return Verdict::accept();
  // 4. Does not fit (pool_full), or over the threshold.
  if (ctx.cells > view.remaining_cells()) return Verdict::drop(DropReason::kPoolFull);
  if ((uint64_t{q_cells} << kFractionBits) >= t[i]) return Verdict::drop(DropReason::kThreshold);
  // 3. Under the threshold and fits: the oracle decides (its coin drawn here, in arrival order).
  if (oracle_ == Oracle::kNone) return Verdict::accept();
  if (oracle_ == Oracle::kFlip)
    flip = std::uniform_real_distribution<double>(0.0, 1.0)(pipe.rng) < flip_probability_;
  ask_oracle = true;
  return Verdict::accept();
}

// With pipelines, the cells a pipeline put in each queue (step 3 compares them with its T). Called
// by the RX worker inside its burst, like admit().
void CredencePolicy::on_enqueue(const ArrivalContext& ctx, const BufferView&) noexcept {
  if (pipelines_ == 1) return;
  Pipe& pipe = pipe_of(ctx.in_port);
  if (burst_hold.policy == this && burst_hold.pipe == &pipe) {
    pipe.own_cells[ctx.queue] += ctx.cells;
    return;
  }
  // Not the pipeline this burst holds (an enqueue without admit(): the header reserve).
  if (burst_hold.policy == this && burst_hold.pipe != nullptr) {
    release(*static_cast<Pipe*>(burst_hold.pipe));
    burst_hold.pipe = nullptr;
  }
  acquire(pipe);
  pipe.own_cells[ctx.queue] += ctx.cells;
  release(pipe);
}

void CredencePolicy::on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept {
  Pipe& pipe = pipe_of(ev.in_port);
  acquire(pipe);
  const uint32_t q = ev.queue;
  pipe.last_ns = std::max(pipe.last_ns, ev.now_ns);
  if (pipelines_ > 1) {
    pipe.own_cells[q] -= std::min(ev.cells, pipe.own_cells[q]);
    if (view.queue_cells(q) == 0) pipe.own_cells[q] = 0;
  }
  // The port's idle queues drained until now under the old set of busy queues.
  drain_port(pipe, view.layout().port_of(q), ev.now_ns, view);
  uint64_t t = pipe.t[q] - std::min(uint64_t{ev.cells} << kFractionBits, pipe.t[q]);
  if (cells_of(pipe, q, view) == 0) {
    if (reset_on_empty_) t = 0;
    mark_draining(pipe, q);  // LQD's queue drains on from here
  }
  set_threshold(pipe, q, t);
  release(pipe);
}

double CredencePolicy::threshold(uint32_t queue) const noexcept {
  uint64_t t = 0;
  for (uint32_t k = 0; k < pipelines_; ++k) {
    std::lock_guard guard(pipes_[k].lock);
    t += pipes_[k].t[queue];
  }
  return static_cast<double>(t) / kUnitsPerCell;
}

double CredencePolicy::gamma() const noexcept {
  uint64_t g = 0;
  for (uint32_t k = 0; k < pipelines_; ++k) {
    std::lock_guard guard(pipes_[k].lock);
    g += pipes_[k].gamma;
  }
  return static_cast<double>(g) / kUnitsPerCell;
}

uint32_t CredencePolicy::threshold_cells(uint32_t queue, uint8_t,
                                         const BufferView&) const noexcept {
  uint64_t t = 0;
  for (uint32_t k = 0; k < pipelines_; ++k) {
    std::lock_guard guard(pipes_[k].lock);
    t += pipes_[k].t[queue];
  }
  return static_cast<uint32_t>((t + kUnitsPerCell - 1) >> kFractionBits);
}

nlohmann::json CredencePolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  const uint32_t n = pipes_[0].t.size();
  std::vector<double> total(n, 0.0);
  double gamma = 0;
  nlohmann::json per_pipe = nlohmann::json::array();
  for (uint32_t k = 0; k < pipelines_; ++k) {
    const Pipe& pipe = pipes_[k];
    std::lock_guard guard(pipe.lock);
    nlohmann::json t = nlohmann::json::array();
    for (uint32_t q = 0; q < n; ++q) {
      const double cells = static_cast<double>(pipe.t[q]) / kUnitsPerCell;
      total[q] += cells;
      t.push_back(cells);
    }
    gamma += static_cast<double>(pipe.gamma) / kUnitsPerCell;
    if (k == 0) d["state"]["feature_ewma_total_cells"] = pipe.features.ewma_total();
    if (pipelines_ > 1) {
      per_pipe.push_back({{"lqd_thresholds_cells", std::move(t)},
                          {"gamma_cells", static_cast<double>(pipe.gamma) / kUnitsPerCell},
                          {"own_cells", pipe.own_cells}});
    }
  }
  d["state"]["lqd_thresholds_cells"] = total;
  d["state"]["gamma_cells"] = gamma;
  if (pipelines_ > 1) d["state"]["pipelines"] = std::move(per_pipe);
  if (forest_) {
    d["state"]["forest"] = {{"trees", forest_->trees()},
                            {"nodes", forest_->nodes()},
                            {"depth", forest_->depth()},
                            {"kernel", forest_->kernel()}};
  }
  return d;
}

}  // namespace sharebuf::policies

// credence — Credence (Credence paper, Algorithm 1; docs/policies/credence.md): drop-tail with
// thresholds that follow what LQD (push-out) would hold, and a machine-learned oracle. Arrival of c
// cells to queue i (one critical section):
//   1. T follows LQD's virtual queues: if Gamma + c > B, the queue j with the highest threshold
//      (i itself when i is among the highest) gives up min(c, T[j]); T[i] += c.
//   2. Safeguard: if the longest real queue is shorter than B/N, accept.
//   3. If Q[i] < T[i] and the frame fits, ask the oracle: accept unless it predicts a drop
//      (reason prediction).
//   4. Otherwise drop: reason pool_full if the frame does not fit, else threshold.
// Departures lower T[i] by the departing cells; while the real queue i is empty its T[i] drains
// as LQD's queue would: a port's idle queues share its line rate by its scheduler (computed
// lazily at the port's next event; drain_port()). Options:
// reset_on_empty (T[i] = 0 when the real queue empties, the authors' ns-3 approximation) and
// safeguard (on; off only for analysis).
// Oracles: none (never predicts a drop: FollowLQD), forest (random forest from a JSON model,
// policies/forest_oracle.h), flip (the base oracle's answer flipped with probability p, seeded),
// perfect (replay only: LQD's own fate of the same arrival, from PolicyEnv::oracle_labels).
// Features, in cells: queue length, total occupancy, their EWMAs over base_rtt
// (policies/credence_features.h).
//
// Cost: the highest threshold comes from a tournament tree (O(log N) per change), the safeguard
// from BufferState's count of queues at or above B/N (O(1)), and lazy draining visits only the
// queues that may be draining: those that had an arrival or emptied since they were last seen
// busy. bench/policies/admission_bench.cpp measures the full-virtual-buffer case.
//
// Pipelines (option `pipelines`, default 1). With 1, all of the above is one state and every
// decision one atomic step in one order: the paper's algorithm. That order is what bounds two RX
// threads (each decision reads and changes Gamma and the highest threshold: two threads get at
// most one thread's decisions, docs/measurements/datapath-latency-log.md). With P > 1, each
// ingress pipeline (the arrival's in_port mod P: the RX worker of that port in per-port mode, as
// the Tofino trimming approximation maps them) runs steps 1-4 over its own arrivals with its own
// thresholds, its own count of the cells it put in each queue, and its own lock, the way per-pipe
// registers would on Tofino: LQD's virtual push-out in pipeline p takes from p's own highest
// threshold, its virtual buffer is full when its Gamma plus the other pipelines' (as published at
// their last release of their lock: at most one burst old) exceeds B, step 3 compares the cells p
// put in queue i with p's T[i], and a departure lowers the thresholds of the pipeline that
// admitted the frame (its in_port). Idle thresholds of p drain while p has no cells in the queue,
// at the port's rate over P. A pipeline idle for a base RTT is drained by the next pipeline that
// finds the virtual buffer full (it takes the idle one's lock only if it is free). With P = 1 this
// is exactly the algorithm above; the replay runs either deterministically (it decides outside
// bursts, so it reads the other pipelines' Gamma as of each decision).
// Thread-safety: admit() and on_dequeue() take the arrival's (departure's) pipeline's lock, a
// spinlock. describe() takes each in turn. The forest is evaluated after the lock is released, on
// features snapshotted under it. Inside an RX worker's burst (begin_burst()/end_burst()) that
// worker keeps the lock of the pipeline it last decided for until the burst ends or an arrival of
// another pipeline comes (it holds one pipeline lock at a time, so no deadlock), and its admit()
// calls (forest included) run under it: every decision of one pipeline stays one atomic step in
// one order, and a lock's state moves between cores once per burst, not per frame
// (BM_DecideBurst). Others (egress on_dequeue, describe) wait at most one burst.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "common/cache_line_vector.h"
#include "common/spin_lock.h"
#include "policies/credence_features.h"
#include "policies/forest_oracle.h"
#include "policies/max_tree.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class CredencePolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "credence";
  static constexpr std::array<ParamSpec, 9> kParams{{
      {"oracle", ParamType::kString, "none",
       "\"none\" (FollowLQD), \"forest\", \"flip\", or \"perfect\" (sharebuf-replay only)", 0, 0,
       "none,forest,flip,perfect"},
      {"model", ParamType::kString, "data/credence-forest.json",
       "JSON random-forest model (oracle forest, or flip over forest); default: the shipped one"},
      {"flip_probability", ParamType::kNumber, "0",
       "oracle flip: probability of flipping each answer", 0, 1},
      {"flip_base", ParamType::kString, "none",
       "oracle flip: the oracle whose answers are flipped: \"none\", \"forest\", or "
       "\"perfect\" (sharebuf-replay only)",
       0, 0, "none,forest,perfect"},
      {"seed", ParamType::kInteger, "1", "oracle flip: random seed (same seed, same flips)", 0,
       18446744073709551615.0},
      {"base_rtt_us", ParamType::kNumber, "10",
       "time constant of the features' EWMAs, microseconds", 0.001, 1e6},
      {"safeguard", ParamType::kBool, "true", "accept while the longest queue is below B/N"},
      {"reset_on_empty", ParamType::kBool, "false",
       "set T[i] = 0 when queue i empties (ns-3 code)"},
      {"pipelines", ParamType::kInteger, "1",
       "1: one state, every decision in one order (the paper's algorithm); P > 1: thresholds "
       "and a lock per ingress pipeline (in_port mod P), an approximation that lets P RX "
       "threads decide in parallel",
       1, 64},
  }};

  CredencePolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  void on_install(const BufferView& view) noexcept override;
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  void begin_burst() noexcept override;
  void end_burst() noexcept override;
  void on_enqueue(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t, const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  double threshold(uint32_t queue) const noexcept;  // cells
  double gamma() const noexcept;                    // cells (all pipelines)
  uint32_t pipelines() const noexcept { return pipelines_; }

  // Thresholds are kept in fixed point, 1/65536 cell: Gamma is then an exact sum (a double sum
  // updated on every arrival and departure drifts), and the tournament tree compares integers.
  static constexpr int kFractionBits = 16;
  static constexpr uint64_t kUnitsPerCell = uint64_t{1} << kFractionBits;

 private:
  enum class Oracle { kNone, kForest, kFlip, kPerfect };
  // One ingress pipeline's Credence state (all of it, with pipelines = 1).
  struct alignas(64) Pipe {
    Pipe() : t(0), features(0, 1) {}
    void init(uint32_t queues, uint32_t ports, uint32_t widest, double base_rtt_ns, uint64_t seed);
    mutable common::SpinLock lock;  // guards everything below but the atomics
    // For the other pipelines, at a release of `lock`: Gamma when it changed, and the latest
    // event time when it moved on by half a base RTT. On a line of its own, written only then:
    // while the virtual buffer is full Gamma stays put, so the other pipelines' reads (one per
    // lock hold) hit their own caches instead of fetching a line this pipeline keeps writing.
    struct alignas(64) Published {
      std::atomic<uint64_t> gamma{0};
      std::atomic<uint64_t> ns{0};
    } published;
    uint64_t published_ns = 0;  // this pipeline's copy of published.ns
    MaxTree t;                  // T[q], in units (1/kUnitsPerCell cell)
    common::CacheLineVector<uint64_t>
        port_last_ns;  // per port: time its thresholds were drained to
    common::CacheLineVector<uint64_t>
        draining;  // bit q: T[q] may be draining (real queue seen empty)
    common::CacheLineVector<uint32_t>
        port_draining;  // per port: how many of its queues' bits are set
    common::CacheLineVector<uint32_t>
        fill_queue;                             // drain_port() scratch: idle queues being drained
    common::CacheLineVector<double> fill_left;  //   and what is left of their thresholds
    common::CacheLineVector<uint32_t>
        own_cells;                         // pipelines > 1: cells this pipeline put in each queue
    uint64_t drained_all_ns = UINT64_MAX;  // time of the last drain_all()
    uint64_t last_ns = 0;                  // latest event time seen
    CredenceFeatures features;
    uint64_t gamma = 0;            // sum of T, units
    uint64_t others = 0;           // the other pipelines' published Gamma when `lock` was taken
    bool looked_for_idle = false;  // since `lock` was taken
    std::mt19937_64 rng;
  };

  bool predict_drop(const ArrivalContext& ctx,
                    const double (&features)[kOracleFeatures]) const noexcept;
  // kPipes: pipelines_ > 1. The one-pipeline path is compiled apart so that it does no
  // bookkeeping for other pipelines (it is the default and the paper's algorithm).
  template <bool kPipes>
  Verdict admit_in(Pipe& pipe, const ArrivalContext& ctx, const BufferView& view) noexcept;
  template <bool kPipes>
  Verdict decide_locked(Pipe& pipe, const ArrivalContext& ctx, const BufferView& view,
                        double (&features)[kOracleFeatures], bool& flip, bool& ask_oracle) noexcept;
  // A table, not in_port % P: a division is a few ns of a ~15 ns decision.
  Pipe& pipe_of(uint16_t in_port) const noexcept {
    return pipes_[in_port < pipe_of_port_.size() ? pipe_of_port_[in_port] : in_port % pipelines_];
  }
  void acquire(Pipe& pipe) const noexcept;
  void release(Pipe& pipe) const noexcept;
  void drain_idle_pipes(Pipe& pipe, uint64_t now_ns, const BufferView& view) noexcept;
  // Queue q's cells that count as pipeline `pipe`'s: all of them with one pipeline, else the
  // cells it put there (never more than the queue holds).
  uint32_t cells_of(const Pipe& pipe, uint32_t q, const BufferView& view) const noexcept {
    const uint32_t real = view.queue_cells(q);
    return pipelines_ == 1 ? real : std::min(real, pipe.own_cells[q]);
  }
  void drain_port(Pipe& pipe, uint32_t port, uint64_t now_ns, const BufferView& view) noexcept;
  void drain_port_slow(Pipe& pipe, uint32_t port, uint64_t elapsed_ns,
                       const BufferView& view) noexcept;
  void drain_all(Pipe& pipe, uint64_t now_ns, const BufferView& view) noexcept;
  static void lower_threshold(Pipe& pipe, uint32_t queue, double units) noexcept;
  static void set_threshold(Pipe& pipe, uint32_t queue, uint64_t t) noexcept {
    if (t == pipe.t[queue]) return;   // e.g. LQD refusing the arrival: nothing moves
    pipe.gamma += t - pipe.t[queue];  // modulo 2^64, and the sum itself is never negative
    pipe.t.set(queue, t);
  }
  void mark_draining(Pipe& pipe, uint32_t queue) const noexcept {
    uint64_t& word = pipe.draining[queue / 64];
    const uint64_t bit = 1ull << (queue % 64);
    if ((word & bit) == 0) ++pipe.port_draining[env().layout->port_of(queue)];
    word |= bit;
  }
  void unmark_draining(Pipe& pipe, uint32_t queue) const noexcept {
    uint64_t& word = pipe.draining[queue / 64];
    const uint64_t bit = 1ull << (queue % 64);
    if ((word & bit) != 0) --pipe.port_draining[env().layout->port_of(queue)];
    word &= ~bit;
  }

  Oracle oracle_;
  bool flip_over_forest_ = false;
  bool flip_over_perfect_ = false;
  std::string model_path_;
  std::optional<RandomForest> forest_;
  double flip_probability_;
  uint64_t seed_;
  double base_rtt_ns_;
  bool safeguard_;
  bool reset_on_empty_;
  uint32_t pipelines_ = 1;

  std::vector<double> rate_units_per_ns_;  // per port: line rate (over the pipelines)
  std::vector<SchedulingKind> port_kind_;  // per port: how it shares its rate
  std::vector<double> weight_;             // per queue: its scheduler weight (1 unless DRR)
  std::unique_ptr<Pipe[]> pipes_;          // pipelines_ of them
  std::vector<uint8_t> pipe_of_port_;      // per port of the layout: in_port % pipelines_
};

}  // namespace sharebuf::policies

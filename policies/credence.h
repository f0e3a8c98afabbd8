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
// Thread-safety: admit() and on_dequeue() take lock_ (a spinlock). describe() takes it too. The
// forest is evaluated after the lock is released, on features snapshotted under it. Inside an RX
// worker's burst (begin_burst()/end_burst()) that worker holds lock_ for the whole burst, and its
// admit() calls (forest included) run under it: every decision stays one atomic step in one
// order, and two RX threads move the state between their cores once per burst, not per frame
// (BM_DecideBurst). Others (egress on_dequeue, describe) wait at most one burst.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <vector>

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
  static constexpr std::array<ParamSpec, 8> kParams{{
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
  }};

  CredencePolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  void on_install(const BufferView& view) noexcept override;
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  void begin_burst() noexcept override;
  void end_burst() noexcept override;
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t, const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  double threshold(uint32_t queue) const noexcept;  // cells
  double gamma() const noexcept;                    // cells

  // Thresholds are kept in fixed point, 1/65536 cell: Gamma is then an exact sum (a double sum
  // updated on every arrival and departure drifts), and the tournament tree compares integers.
  static constexpr int kFractionBits = 16;
  static constexpr uint64_t kUnitsPerCell = uint64_t{1} << kFractionBits;

 private:
  enum class Oracle { kNone, kForest, kFlip, kPerfect };
  bool predict_drop(const ArrivalContext& ctx,
                    const double (&features)[kOracleFeatures]) const noexcept;
  Verdict decide_locked(const ArrivalContext& ctx, const BufferView& view,
                        double (&features)[kOracleFeatures], bool& flip, bool& ask_oracle) noexcept;
  void drain_port(uint32_t port, uint64_t now_ns, const BufferView& view) noexcept;
  void drain_port_slow(uint32_t port, uint64_t elapsed_ns, const BufferView& view) noexcept;
  void drain_all(uint64_t now_ns, const BufferView& view) noexcept;
  void lower_threshold(uint32_t queue, double units) noexcept;
  void set_threshold(uint32_t queue, uint64_t t) noexcept {
    if (t == t_[queue]) return;  // e.g. LQD refusing the arrival: nothing moves
    gamma_ += t - t_[queue];     // modulo 2^64, and the sum itself is never negative
    t_.set(queue, t);
  }
  void mark_draining(uint32_t queue) noexcept {
    uint64_t& word = draining_[queue / 64];
    const uint64_t bit = 1ull << (queue % 64);
    if ((word & bit) == 0) ++port_draining_[env().layout->port_of(queue)];
    word |= bit;
  }
  void unmark_draining(uint32_t queue) noexcept {
    uint64_t& word = draining_[queue / 64];
    const uint64_t bit = 1ull << (queue % 64);
    if ((word & bit) != 0) --port_draining_[env().layout->port_of(queue)];
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

  mutable common::SpinLock lock_;  // guards everything below
  // The thread holding lock_ for a burst (its address of burst_token), else null.
  std::atomic<const void*> burst_owner_{nullptr};
  MaxTree t_;                              // T[q], in units (1/kUnitsPerCell cell)
  std::vector<uint64_t> port_last_ns_;     // per port: time its thresholds were drained to
  std::vector<uint64_t> draining_;         // bit q: T[q] may be draining (real queue seen empty)
  std::vector<uint32_t> port_draining_;    // per port: how many of its queues' bits are set
  std::vector<double> rate_units_per_ns_;  // per port: line rate
  std::vector<SchedulingKind> port_kind_;  // per port: how it shares its rate
  std::vector<double> weight_;             // per queue: its scheduler weight (1 unless DRR)
  std::vector<uint32_t> fill_queue_;       // drain_port() scratch: idle queues being drained
  std::vector<double> fill_left_;          //   and what is left of their thresholds
  uint64_t drained_all_ns_ = UINT64_MAX;   // time of the last drain_all()
  CredenceFeatures features_;
  uint64_t gamma_ = 0;  // sum of T, units
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> coin_{0.0, 1.0};
};

}  // namespace sharebuf::policies

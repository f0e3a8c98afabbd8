// protean — Protean (Protean paper, Algorithms 1 and 2; docs/policies/protean.md).
// Ingress, by the class's Protean role:
//   short:  accept iff c < Rem                          (CS for short flows)
//   long:   accept iff Q[q] < alpha_long * Rem           (DT)
//   incast: accept iff Q[q] < thr[q]                     (thr from the egress)
// Egress, on every dequeue from queue q at time t:
//   g_raw = (Q[q] - Qprev[q]) / (t - tprev[q]) / rate(p)   (1 = growing at line rate)
//   g = beta * g_raw + (1 - beta) * gprev[q]
//   thr[q] = g > buildup ? g * alpha_incast * Rem : alpha_incast * Rem
// Qprev, tprev, gprev start at zero; before a queue's first dequeue, and whenever the queue is
// empty (no dequeue can update it then), thr is alpha_incast * Rem with the current Rem.
// `sync = "probe"` runs steps 1-5 on the probe registers once per probe interval instead of at
// every dequeue (the Tofino prototype: probe packets carry queue length and time to ingress);
// an interval without change is a gradient sample of 0.
// A class's own alpha, if set, replaces alpha_long / alpha_incast for its frames' admission.
// `arithmetic = "tofino"` computes as p4/protean.p4 does, through the tables sharebuf-p4tables
// installs (policies/tofino_arithmetic.h): the gradient as a Q.8 integer from log2/exp2 tables
// (Eq. 4), the EWMA by shifts (beta must be 1/2^k), the thresholds from log2/exp2 tables (Eq. 5;
// alpha_long x Rem too).
//
// Thread-safety: on_dequeue() for a queue runs on its port's egress owner only, on_probe() on one
// RX worker at a time (and then on_dequeue() does nothing); admit() reads
// thr[q] (a relaxed atomic double) on any RX worker; describe() reads everything relaxed.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class ProteanPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "protean";
  static constexpr std::array<ParamSpec, 6> kParams{{
      {"alpha_incast", ParamType::kNumber, "1.0", "alpha of incast-role classes (testbed 0.8)",
       1.0 / 1024, 1024},
      {"alpha_long", ParamType::kNumber, "0.5", "DT alpha of long-role classes", 1.0 / 1024, 1024},
      {"beta", ParamType::kNumber, "0.25", "EWMA weight of the newest gradient sample", 0, 1},
      {"buildup", ParamType::kNumber, "2.0",
       "gradient (in multiples of the line rate) above which an incast is assumed", 0, 1e6},
      {"arithmetic", ParamType::kString, "exact", "\"exact\" or \"tofino\" (log2/exp2 tables)", 0,
       0, "exact,tofino"},
      {"sync", ParamType::kString, "dequeue",
       "\"dequeue\": gradient and Rem at every dequeue (the paper's algorithm); \"probe\": from "
       "the probe registers once per probe interval (the Tofino prototype)",
       0, 0, "dequeue,probe"},
  }};

  ProteanPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override;
  bool uses_probes() const noexcept override { return sync_probe_; }
  void on_probe(const BufferView& registers, uint64_t boundary_ns,
                uint64_t interval_ns) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  // The current smoothed gradient of a queue (tests, describe).
  double gradient(uint32_t queue) const noexcept {
    return state_[queue].g_prev.load(std::memory_order_relaxed);
  }
  // The incast threshold thr[q] in cells as admission uses it now.
  double incast_threshold(uint32_t queue, const BufferView& view) const noexcept;
  // Sets thr[q] as Algorithm 2 last left it: the state protean.p4's incast_thr register holds,
  // for a check that decides the program's paths from its registers (tests/p4/testgen_check.py).
  void set_incast_threshold(uint32_t queue, double cells) noexcept {
    state_[queue].thr.store(cells, std::memory_order_relaxed);
  }

 private:
  struct QueueState {
    std::atomic<uint32_t> q_prev{0};
    std::atomic<uint64_t> t_prev{0};
    std::atomic<double> g_prev{0};
    std::atomic<double> thr{-1};  // < 0: no dequeue yet
  };

  // Steps 2-5 for queue q sampled at length `q_cells` at time t; the change since the previous
  // sample happened over `dt_ns`, and `quiet` further samples saw no change (probe sync).
  void update(uint32_t queue, uint32_t port, uint32_t q_cells, uint64_t t_ns, uint64_t dt_ns,
              uint64_t quiet, double rem) noexcept;
  void update_tofino(uint32_t queue, uint32_t port, uint32_t q_cells, uint64_t t_ns, uint64_t dt_ns,
                     uint64_t quiet, double rem) noexcept;
  double tofino_long_threshold(uint8_t class_id, uint32_t rem) const noexcept;

  double alpha_incast_;
  double alpha_long_;
  double beta_;
  double buildup_;
  bool tofino_;
  bool sync_probe_;
  // arithmetic = "tofino": beta = 2^-beta_shift_, Q.8 logarithms of the alphas and port rates.
  int beta_shift_ = 2;
  int32_t log_alpha_incast_ = 0;
  int32_t log_alpha_long_ = 0;
  int32_t buildup_q8_ = 512;
  std::vector<int32_t> log_rate_;
  AlphaTable alpha_long_of_;
  AlphaTable alpha_incast_of_;
  std::unique_ptr<QueueState[]> state_;
};

}  // namespace sharebuf::policies

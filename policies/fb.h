// fb — FB, flexible buffer sharing (FB paper, Eq. 3 and section 4; docs/policies/fb.md):
//   T(q) = alpha(class) * (1 / N_p) * gamma(q) * Rem,   accept iff Q[q] < T(q)
// N_p: congested (non-empty) queues of the frame's priority group, counting the arriving queue;
// gamma(q): the queue's share of its port — "share" (default, as the Tofino version): round
// robin 1/n_active, DRR w_q / sum of active weights, strict priority 1 for the highest non-empty
// queue and 1/n_active below it; or "measured": an EWMA of the queue's dequeue rate over the
// port's line rate, with the share as the value for a queue without history. With one queue per
// port gamma = 1 and N_p counts all congested queues (the paper's single-queue mode).
// Per-priority occupancy then stays below alpha_p/(1+alpha_p) of B and the total below
// B (alpha_L + alpha_H) / (1 + alpha_L + alpha_H) (Eq. 4), however many queues congest.
//
// Thread-safety: admit() reads the view and, in "measured" mode, per-queue rates that
// on_dequeue() (the port's egress owner) writes as relaxed atomics.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class FbPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "fb";
  static constexpr std::array<ParamSpec, 4> kParams{{
      {"alpha_high", ParamType::kNumber, "20",
       "alpha of high-priority classes that set none (paper's simulations; testbed 0.8)",
       1.0 / 1024, 1024},
      {"alpha_low", ParamType::kNumber, "0.5",
       "alpha of low-priority classes that set none (paper's simulations; testbed 0.6)", 1.0 / 1024,
       1024},
      {"gamma", ParamType::kString, "share", "\"share\" (scheduler share) or \"measured\"", 0, 0,
       "share,measured"},
      {"gamma_weight", ParamType::kNumber, "0.125",
       "EWMA weight of a new dequeue-rate sample (gamma = \"measured\")", 1.0 / 1024, 1},
  }};

  FbPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    return view.queue_cells(ctx.queue) < threshold(ctx.queue, ctx.class_id, view)
               ? Verdict::accept()
               : Verdict::drop(DropReason::kThreshold);
  }
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  // The factors of Eq. 3 for a frame of `class_id` arriving at `queue` (tests, describe).
  double n_p(uint32_t queue, uint8_t class_id, const BufferView& view) const noexcept;
  double gamma(uint32_t queue, const BufferView& view) const noexcept;

 private:
  double threshold(uint32_t queue, uint8_t class_id, const BufferView& view) const noexcept {
    return alphas_[class_id] / n_p(queue, class_id, view) * gamma(queue, view) *
           view.remaining_cells();
  }
  double share(uint32_t queue, const BufferView& view) const noexcept;

  struct RateState {
    std::atomic<double> rate_cells_per_s{0};
    std::atomic<uint64_t> last_ns{0};
  };

  double alpha_high_;
  double alpha_low_;
  bool measured_;
  double gamma_weight_;
  AlphaTable alphas_;
  std::unique_ptr<RateState[]> rates_;
};

}  // namespace sharebuf::policies

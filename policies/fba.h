// fba — FB approximated on DT (FB paper, section 5.2; docs/policies/fba.md): a DT whose
// per-queue alpha a software controller recomputes every `period_ms` from a snapshot of the
// queues,
//   alpha_dt[q] = alpha_c * gamma(q) / N_p,      accept iff Q[q] < alpha_dt[q] * Rem
// with c the queue's class, N_p the congested queues of its priority group (q counted) and gamma
// its scheduler share, as in fb. Between updates the alphas are frozen, which is the point: it
// shows what FB gains over a device that can only reconfigure DT. Like DT it has one threshold
// per queue, so with one queue per port it is DT with a periodically changing alpha (section 5.2:
// "FBA cannot approximate FB if only a single queue is available per port").
//
// Thread-safety: the first admit() at or after the update time wins a CAS and recomputes every
// queue's alpha (O(queues)); other workers keep reading the previous alphas (relaxed atomics).
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class FbaPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "fba";
  static constexpr std::array<ParamSpec, 3> kParams{{
      {"alpha_high", ParamType::kNumber, "20", "alpha of high-priority classes that set none",
       1.0 / 1024, 1024},
      {"alpha_low", ParamType::kNumber, "0.5", "alpha of low-priority classes that set none",
       1.0 / 1024, 1024},
      {"period_ms", ParamType::kNumber, "1000",
       "how often the controller recomputes the alphas (paper: 1 s; down to 1 ms)", 1, 3.6e6},
  }};

  FbaPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    if (ctx.now_ns >= next_update_ns_.load(std::memory_order_relaxed))
      maybe_update(ctx.now_ns, view);
    return view.queue_cells(ctx.queue) < queue_alpha(ctx.queue) * view.remaining_cells()
               ? Verdict::accept()
               : Verdict::drop(DropReason::kThreshold);
  }
  void on_install(const BufferView& view) noexcept override { recompute(view); }
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  // The DT alpha queue q holds until the next update.
  double queue_alpha(uint32_t queue) const noexcept {
    return alpha_dt_[queue].load(std::memory_order_relaxed);
  }
  uint64_t updates() const noexcept { return updates_.load(std::memory_order_relaxed); }

 private:
  void maybe_update(uint64_t now_ns, const BufferView& view) noexcept;
  void recompute(const BufferView& view) noexcept;

  double alpha_high_;
  double alpha_low_;
  double period_ms_;
  uint64_t period_ns_;
  AlphaTable alphas_;
  std::unique_ptr<std::atomic<double>[]> alpha_dt_;
  std::atomic<uint64_t> next_update_ns_{0};
  std::atomic<uint64_t> updates_{0};
};

}  // namespace sharebuf::policies

// dt — Dynamic Thresholds (Choudhury & Hahne 1998; docs/policies/dt.md): T(q) = alpha(class) * Rem
// with Rem = B - Occ, and a frame is accepted iff Q[q] < T(q), Q taken before the frame is added
// (the papers' form; ns-3's reference code tests Q + c <= T, one frame apart at the boundary). With
// S queues saturated at the same alpha each settles at alpha * B / (1 + alpha * S); one queue alone
// takes alpha / (1 + alpha) of the buffer (alpha 1: 50 %, 2: 67 %, 0.5: 33 %).
//
// Cost: one multiply and one compare; bench/policies/admission_bench.cpp measures it.
#pragma once

#include <array>

#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class DtPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "dt";
  static constexpr std::array<ParamSpec, 1> kParams{{
      {"alpha", ParamType::kNumber, "1.0",
       "alpha of classes that set none; one saturated queue takes alpha/(1+alpha) of B", 1.0 / 1024,
       1024},
  }};

  DtPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    const double threshold = alphas_[ctx.class_id] * view.remaining_cells();
    return view.queue_cells(ctx.queue) < threshold ? Verdict::accept()
                                                   : Verdict::drop(DropReason::kThreshold);
  }
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

 private:
  double alpha_;
  AlphaTable alphas_;
};

}  // namespace sharebuf::policies

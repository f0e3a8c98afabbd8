// abm — Active Buffer Management (Addanki et al., SIGCOMM 2022), a baseline (docs/policies/abm.md):
//   T(q) = alpha * (1 / N_p) * gamma(q) * Rem,  accept iff Q[q] < T(q)
// with FB's factors (policies/fb_factors.h, gamma = scheduler share), except that frames of a
// flow's first round trip use `first_rtt_alpha`; policies/first_rtt.h says which frames those are.
#pragma once

#include <array>

#include "policies/class_alpha.h"
#include "policies/first_rtt.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class AbmPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "abm";
  static constexpr auto kParams = join_params(
      std::array<ParamSpec, 2>{{
          {"alpha", ParamType::kNumber, "0.5", "alpha of classes that set none", 1.0 / 1024, 1024},
          {"first_rtt_alpha", ParamType::kNumber, "64",
           "alpha for a flow's first RTT (64 in the Credence paper; the authors' ns-3 code uses "
           "1024)",
           1.0 / 1024, 1 << 20},
      }},
      FirstRtt::kParams);

  AbmPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;

  // Whether a frame of `bytes` of this flow arriving now belongs to the flow's first RTT, as the
  // flow table sees it (records the flow).
  bool first_rtt(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes = 0) noexcept {
    return first_rtt_.seen_first(flow_hash, now_ns, bytes);
  }

 private:
  AbmPolicy(const ParamReader& reader, const PolicyEnv& env);
  double threshold(uint32_t queue, uint8_t class_id, double alpha,
                   const BufferView& view) const noexcept;

  double alpha_;
  double first_rtt_alpha_;
  AlphaTable alphas_;
  FirstRtt first_rtt_;
};

}  // namespace sharebuf::policies

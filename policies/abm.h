// abm — Active Buffer Management (Addanki et al., SIGCOMM 2022), a baseline (docs/policies/abm.md):
//   T(q) = alpha * (1 / N_p) * gamma(q) * Rem,  accept iff Q[q] < T(q)
// with FB's factors (policies/fb_factors.h, gamma = scheduler share), except that frames of a
// flow's first round trip use `first_rtt_alpha`. Which frames those are:
// - where the sender says so (ArrivalContext::first_bdp: ns-3's senders tag their first
//   bandwidth-delay product, as the ABM and Credence authors' simulations do; a replay carries
//   the recorded tag), the sender's answer;
// - otherwise (the live switch: Linux senders say nothing) the switch's own view of the flow:
//   its first `first_bdp_bytes` bytes when that is set (the switch counts them; it differs from
//   the sender's count by retransmissions only), else the frames of its first `base_rtt_us` after
//   its first frame. The time window starts at the SYN, so it must cover the handshake's round
//   trip and the first window's serialisation to reach any data at all.
// Flows are tracked in a FlowTable (policies/flow_table.h; an entry unused for `flow_ageing_us`
// is a new flow again). Frames without a flow hash are never first-RTT.
#pragma once

#include <array>

#include "policies/class_alpha.h"
#include "policies/flow_table.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class AbmPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "abm";
  static constexpr std::array<ParamSpec, 6> kParams{{
      {"alpha", ParamType::kNumber, "0.5", "alpha of classes that set none", 1.0 / 1024, 1024},
      {"first_rtt_alpha", ParamType::kNumber, "64",
       "alpha for a flow's first RTT (64 in the Credence paper; the authors' ns-3 code uses 1024)",
       1.0 / 1024, 1 << 20},
      {"base_rtt_us", ParamType::kNumber, "10",
       "untagged frames: a flow is in its first RTT this long after its first frame", 0.001, 1e6},
      {"first_bdp_bytes", ParamType::kInteger, "0",
       "untagged frames: a flow's first RTT is its first this many bytes (0: base_rtt_us decides)",
       0, 1ll << 40},
      {"flow_ageing_us", ParamType::kNumber, "1000", "a flow unseen this long is new again", 0.001,
       1e9},
      {"flow_table_size", ParamType::kInteger, "4096",
       "flow table entries (4 ways a set; rounded up to a power of two)", 16, 1 << 20},
  }};

  AbmPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;

  // Whether a frame of `bytes` of this flow arriving now belongs to the flow's first RTT, as the
  // flow table sees it (records the flow).
  bool first_rtt(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes = 0) noexcept;

 private:
  AbmPolicy(const ParamReader& reader, const PolicyEnv& env);
  double threshold(uint32_t queue, uint8_t class_id, double alpha,
                   const BufferView& view) const noexcept;

  double alpha_;
  double first_rtt_alpha_;
  double base_rtt_ns_;
  uint64_t first_bdp_bytes_;
  AlphaTable alphas_;
  FlowTable flows_;
};

}  // namespace sharebuf::policies

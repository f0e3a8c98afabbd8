// abm — Active Buffer Management (Addanki et al., SIGCOMM 2022), a baseline (POLICIES.md):
//   T(q) = alpha * (1 / N_p) * gamma(q) * Rem,  accept iff Q[q] < T(q)
// with FB's factors (policies/fb_factors.h, gamma = scheduler share), except that frames of a
// flow's first RTT — the flow was first seen less than `base_rtt_us` ago — use `first_rtt_alpha`.
// Flows are tracked in a small 4-way set-associative table keyed by the datapath's flow hash
// (5-tuple): an entry unused for `flow_ageing_us` is a new flow again, and a flow that finds its
// set full replaces the way seen least recently (that flow then counts as new when it comes back:
// a small table errs towards admitting first-RTT bursts). Four ways, not one: in a direct-mapped
// table two long flows sharing a slot evict each other on every frame, so each is "new" at every
// turn and gets first_rtt_alpha for good (seen live: a saturating UDP queue held at 2000 cells
// grew to 5900 once a TCP flow shared its slot). Frames without a flow hash are never first-RTT.
//
// Thread-safety: the flow table is relaxed atomics updated by whichever RX worker sees the flow;
// concurrent first packets of one flow may both claim it, harmlessly.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class AbmPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "abm";
  static constexpr std::array<ParamSpec, 5> kParams{{
      {"alpha", ParamType::kNumber, "0.5", "alpha of classes that set none", 1.0 / 1024, 1024},
      {"first_rtt_alpha", ParamType::kNumber, "64",
       "alpha for a flow's first RTT (64 in the Credence paper; the authors' ns-3 code uses 1024)",
       1.0 / 1024, 1 << 20},
      {"base_rtt_us", ParamType::kNumber, "10",
       "a flow is in its first RTT this long after its first frame", 0.001, 1e6},
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

  // Whether a frame of this flow arriving now belongs to the flow's first RTT (records the flow).
  bool first_rtt(uint32_t flow_hash, uint64_t now_ns) noexcept;

 private:
  double threshold(uint32_t queue, uint8_t class_id, double alpha,
                   const BufferView& view) const noexcept;

  struct FlowEntry {
    std::atomic<uint32_t> key{0};
    std::atomic<uint64_t> first_ns{0};
    std::atomic<uint64_t> last_ns{0};
  };

  static constexpr uint32_t kWays = 4;

  double alpha_;
  double first_rtt_alpha_;
  double base_rtt_ns_;
  double ageing_ns_;
  uint32_t table_size_;
  AlphaTable alphas_;
  std::unique_ptr<FlowEntry[]> flows_;
};

}  // namespace sharebuf::policies

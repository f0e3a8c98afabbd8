// fab — Flow-Aware Buffer (FAB; Apostolaki, Vanbever and Ghobadi, "FAB: Toward Flow-aware Buffer
// Sharing on Programmable Switches", Workshop on Buffer Sizing 2019; docs/policies/fab.md):
// Dynamic Thresholds whose alpha depends on the flow —
//   T(q) = alpha_f * Rem,  accept iff Q[q] < T(q)
// with alpha_f = `alpha_short` for a frame of a flow that has sent fewer than `short_bytes` bytes
// since it (re)started, and its class's alpha otherwise. A flow starts when its first frame is
// seen and again after `window_us` without a frame (a FlowTable entry ages out:
// policies/flow_table.h), so a long flow that pauses gets a new allowance. Short flows and the
// heads of long ones ride out bursts in the buffer long flows are kept out of; frames without a
// flow hash (not IPv4/IPv6 TCP/UDP) are held to their class's alpha.
//
// Two variants (`variant`): "intended" (the default) tests the bytes a flow sent before the frame
// against short_bytes (22 500) and gives short flows alpha_short 64; "as-coded" runs the rule as
// the ABM/Credence authors' GenQueueDisc::FlowAwareBuffer does (inet-tub/ns3-datacenter,
// gen-queue-disc.cc): the frame's own bytes are counted before the test, and unless the table sets
// them, short_bytes is 21 000 (their experiments' 15 x PACKET_SIZE of 1400, abm-evaluation.cc) and
// alpha_short 1024 (their attribute alphaUnsched's default, which no script overrides).
//
// Cost: a flow-table lookup (one set of four entries) and DT's multiply and compare.
#pragma once

#include <array>

#include "policies/class_alpha.h"
#include "policies/flow_table.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class FabPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "fab";
  static constexpr std::array<ParamSpec, 6> kParams{{
      {"alpha", ParamType::kNumber, "0.5",
       "alpha of classes that set none: a flow past its first short_bytes", 1.0 / 1024, 1024},
      {"alpha_short", ParamType::kNumber, "64",
       "alpha of a flow's first short_bytes bytes since it (re)started (variant as-coded: 1024 "
       "unless set)",
       1.0 / 1024, 1 << 20},
      {"short_bytes", ParamType::kInteger, "22500",
       "a flow is short until it has sent this many bytes (15 frames of 1500 B; variant as-coded: "
       "21000 unless set)",
       1, 1ll << 40},
      {"window_us", ParamType::kNumber, "5000",
       "a flow idle this long starts again (its short_bytes count restarts)", 0.001, 1e9},
      {"flow_table_size", ParamType::kInteger, "4096",
       "flow table entries (4 ways a set; rounded up to a power of two)", 16, 1 << 20},
      {"variant", ParamType::kString, "intended",
       "\"intended\": the bytes before the frame against short_bytes; \"as-coded\": as the "
       "authors' ns-3 code (the frame's bytes counted first; 21000 B and alpha 1024 by default)",
       0, 0, "intended,as-coded"},
  }};
  static constexpr uint64_t kAsCodedShortBytes = 15 * 1400;
  static constexpr double kAsCodedAlphaShort = 1024;

  FabPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    // as-coded counts the frame itself first (FlowCount += size, then the test).
    const double alpha =
        ctx.flow_hash != 0 && flows_.observe(ctx.flow_hash, ctx.now_ns, ctx.bytes).bytes_before +
                                      (as_coded_ ? ctx.bytes : 0) <
                                  short_bytes_
            ? alpha_short_
            : alphas_[ctx.class_id];
    return view.queue_cells(ctx.queue) < alpha * view.remaining_cells()
               ? Verdict::accept()
               : Verdict::drop(DropReason::kThreshold);
  }
  // A long flow's threshold: the class's alpha (a short flow's frames may go beyond it).
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;

 private:
  FabPolicy(const ParamReader& reader, const PolicyEnv& env);

  bool as_coded_;
  double alpha_;
  double alpha_short_;
  uint64_t short_bytes_;
  AlphaTable alphas_;
  FlowTable flows_;
};

}  // namespace sharebuf::policies

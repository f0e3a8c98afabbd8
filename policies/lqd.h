// lqd — Longest Queue Drop with push-out (POLICIES.md): a frame that fits in the pool is
// accepted. When it does not, and its own queue is (one of) the longest, the arriving frame is
// dropped (reason pool_full: the buffer is full and LQD picked the arrival); otherwise the
// longest queue (lowest index among equals) loses frames from its tail — or its head, with
// `push_out = "head"` — until the arrival fits. Pushed-out frames are counted as their own
// queue's drops with reason pushed_out (datapath/admission_step.cpp evicts and counts).
//
// Cost: a scan of every queue's occupancy, only when the buffer is full.
#pragma once

#include <array>

#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class LqdPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "lqd";
  static constexpr std::array<ParamSpec, 1> kParams{{
      {"push_out", ParamType::kString, "tail",
       "evict from the victim's \"tail\" (newest) or \"head\""},
  }};

  LqdPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  // LQD has no threshold: a queue may grow by all that is left plus what it can push out.
  uint32_t threshold_cells(uint32_t, uint8_t, const BufferView& view) const noexcept override {
    return view.capacity_cells();
  }
  nlohmann::json params() const override { return {{"push_out", from_head_ ? "head" : "tail"}}; }

 private:
  bool from_head_ = false;
};

}  // namespace sharebuf::policies

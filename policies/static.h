// static — Complete Partitioning (docs/policies/static.md): every queue has a fixed cap, by default
// B / number of queues (rounded down, at least one cell), and a frame is accepted iff
// Q[q] + c <= cap(q). Caps are checked against B at construction; they may sum to more than B
// (the pool then refuses with pool_full), which users sometimes want for partial sharing.
#pragma once

#include <array>
#include <vector>

#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class StaticPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "static";
  static constexpr std::array<ParamSpec, 1> kParams{{
      {"cap_cells", ParamType::kNumberOrList, "B / number of queues",
       "cap of every queue (one number), or one cap per queue (a list, in flat queue order)", 1,
       1e12},
  }};

  StaticPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    return view.queue_cells(ctx.queue) + ctx.cells <= caps_[ctx.queue]
               ? Verdict::accept()
               : Verdict::drop(DropReason::kThreshold);
  }
  uint32_t threshold_cells(uint32_t queue, uint8_t, const BufferView&) const noexcept override {
    return caps_[queue];
  }
  nlohmann::json params() const override;

 private:
  std::vector<uint32_t> caps_;
  bool per_queue_ = false;
};

}  // namespace sharebuf::policies

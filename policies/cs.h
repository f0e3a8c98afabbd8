// cs — Complete Sharing (docs/policies/cs.md): accept iff the frame's cells fit in the pool. Any
// queue may take the whole buffer. No parameters, no state.
#pragma once

#include <array>

#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class CsPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "cs";
  static constexpr std::array<ParamSpec, 0> kParams{};

  CsPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    return ctx.cells <= view.remaining_cells() ? Verdict::accept()
                                               : Verdict::drop(DropReason::kPoolFull);
  }
  // A queue may grow by everything that is left.
  uint32_t threshold_cells(uint32_t queue, uint8_t,
                           const BufferView& view) const noexcept override {
    return view.queue_cells(queue) + view.remaining_cells();
  }
};

}  // namespace sharebuf::policies

#include "policies/lqd.h"

namespace sharebuf::policies {

LqdPolicy::LqdPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  from_head_ = reader.choice("push_out") == "head";
  set_params(reader.values());
}

Verdict LqdPolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  if (ctx.cells <= view.remaining_cells()) return Verdict::accept();
  // Ties keep the arrival's own queue as the longest: LQD then drops the arrival.
  const uint32_t victim = longest_other(
      ctx.queue, view.layout().num_queues(), [&](uint32_t j) { return view.queue_cells(j); },
      [](uint32_t) { return true; });
  if (victim == kNoVictim) return Verdict::drop(DropReason::kPoolFull);
  return Verdict::push_out(victim, from_head_);
}

}  // namespace sharebuf::policies

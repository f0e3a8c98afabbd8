#include "policies/lqd.h"

namespace sharebuf::policies {

LqdPolicy::LqdPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  from_head_ = reader.choice("push_out", "tail", {"tail", "head"}) == "head";
}

Verdict LqdPolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  if (ctx.cells <= view.remaining_cells()) return Verdict::accept();
  const uint32_t own = view.queue_cells(ctx.queue);
  uint32_t longest = ctx.queue;
  uint32_t longest_cells = own;
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    const uint32_t cells = view.queue_cells(q);
    if (cells > longest_cells) {
      longest = q;
      longest_cells = cells;
    }
  }
  // Ties keep the arrival's own queue as the longest: LQD then drops the arrival.
  if (longest == ctx.queue) return Verdict::drop(DropReason::kPoolFull);
  return Verdict::push_out(longest, from_head_);
}

}  // namespace sharebuf::policies

#include "policies/abm.h"

#include <algorithm>
#include <cmath>

#include "policies/fb_factors.h"

namespace sharebuf::policies {

AbmPolicy::AbmPolicy(const Params& params, const PolicyEnv& env)
    : AbmPolicy(ParamReader(kName, params, kParams), env) {}

AbmPolicy::AbmPolicy(const ParamReader& reader, const PolicyEnv& env)
    : Policy(env),
      alpha_(reader.number("alpha")),
      first_rtt_alpha_(reader.number("first_rtt_alpha")),
      alphas_(resolve_alphas(env, alpha_)),
      first_rtt_(reader) {
  set_params(reader.values());
}

double AbmPolicy::threshold(uint32_t queue, uint8_t class_id, double alpha,
                            const BufferView& view) const noexcept {
  return alpha / congested_queues(queue, env().group_of_class(class_id), view) *
         scheduler_share(queue, env(), view) * view.remaining_cells();
}

Verdict AbmPolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  const double alpha = first_rtt_(ctx) ? first_rtt_alpha_ : alphas_[ctx.class_id];
  return view.queue_cells(ctx.queue) < threshold(ctx.queue, ctx.class_id, alpha, view)
             ? Verdict::accept()
             : Verdict::drop(DropReason::kThreshold);
}

uint32_t AbmPolicy::threshold_cells(uint32_t queue, uint8_t class_id,
                                    const BufferView& view) const noexcept {
  return static_cast<uint32_t>(std::min<double>(
      std::ceil(threshold(queue, class_id, alphas_[class_id], view)), view.capacity_cells()));
}

}  // namespace sharebuf::policies

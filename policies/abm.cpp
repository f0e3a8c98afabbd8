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
      base_rtt_ns_(reader.number("base_rtt_us") * 1000),
      first_bdp_bytes_(static_cast<uint64_t>(reader.integer("first_bdp_bytes"))),
      alphas_(resolve_alphas(env, alpha_)),
      flows_(static_cast<uint64_t>(reader.integer("flow_table_size")),
             reader.number("flow_ageing_us") * 1000) {
  set_params(reader.values());
}

bool AbmPolicy::first_rtt(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes) noexcept {
  if (flow_hash == 0) return false;
  const FlowTable::Seen seen = flows_.observe(flow_hash, now_ns, bytes);
  if (first_bdp_bytes_ != 0) return seen.bytes_before < first_bdp_bytes_;
  return static_cast<double>(now_ns - std::min(now_ns, seen.first_ns)) < base_rtt_ns_;
}

double AbmPolicy::threshold(uint32_t queue, uint8_t class_id, double alpha,
                            const BufferView& view) const noexcept {
  return alpha / congested_queues(queue, env().group_of_class(class_id), view) *
         scheduler_share(queue, env(), view) * view.remaining_cells();
}

Verdict AbmPolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  const bool first = ctx.first_bdp == FirstBdp::kUnknown
                         ? first_rtt(ctx.flow_hash, ctx.now_ns, ctx.bytes)
                         : ctx.first_bdp == FirstBdp::kYes;
  const double alpha = first ? first_rtt_alpha_ : alphas_[ctx.class_id];
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

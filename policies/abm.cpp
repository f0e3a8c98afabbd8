#include "policies/abm.h"

#include <algorithm>
#include <cmath>

#include "policies/fb_factors.h"

namespace sharebuf::policies {

AbmPolicy::AbmPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_ = reader.number("alpha");
  first_rtt_alpha_ = reader.number("first_rtt_alpha");
  base_rtt_ns_ = reader.number("base_rtt_us") * 1000;
  ageing_ns_ = reader.number("flow_ageing_us") * 1000;
  first_bdp_bytes_ = static_cast<uint64_t>(reader.integer("first_bdp_bytes"));
  // 32 bytes an entry: at most 32 MiB.
  const auto size = reader.integer("flow_table_size");
  set_params(reader.values());
  table_size_ = 16;
  while (table_size_ < size)
    table_size_ <<= 1;
  alphas_ = resolve_alphas(env, alpha_);
  flows_ = std::make_unique<FlowEntry[]>(table_size_);
}

bool AbmPolicy::first_rtt(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes) noexcept {
  if (flow_hash == 0) return false;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  FlowEntry* set = &flows_[(flow_hash & (table_size_ / kWays - 1)) * kWays];
  // The flow's way, or else the way seen least recently (an empty way is never seen: 0).
  FlowEntry* e = &set[0];
  for (uint32_t w = 0; w < kWays; ++w) {
    if (set[w].key.load(kRelaxed) == flow_hash) {
      e = &set[w];
      break;
    }
    if (set[w].last_ns.load(kRelaxed) < e->last_ns.load(kRelaxed)) e = &set[w];
  }
  const bool known =
      e->key.load(kRelaxed) == flow_hash &&
      static_cast<double>(now_ns - std::min(now_ns, e->last_ns.load(kRelaxed))) <= ageing_ns_;
  if (!known) {
    e->key.store(flow_hash, kRelaxed);
    e->first_ns.store(now_ns, kRelaxed);
    e->bytes.store(0, kRelaxed);
  }
  e->last_ns.store(now_ns, kRelaxed);
  if (first_bdp_bytes_ != 0) return e->bytes.fetch_add(bytes, kRelaxed) < first_bdp_bytes_;
  return static_cast<double>(now_ns - std::min(now_ns, e->first_ns.load(kRelaxed))) < base_rtt_ns_;
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

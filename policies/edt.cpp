#include "policies/edt.h"

#include <algorithm>
#include <cmath>

namespace sharebuf::policies {

EdtPolicy::EdtPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_ = reader.number("alpha");
  near_empty_ = static_cast<uint32_t>(reader.integer("near_empty_cells"));
  time_limit_ns_ = reader.number("time_limit_us") * 1000;
  set_params(reader.values());
  alphas_ = resolve_alphas(env, alpha_);
  state_ = std::make_unique<QueueState[]>(env.layout->num_queues());
}

Verdict EdtPolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  QueueState& s = state_[ctx.queue];
  const uint32_t q = view.queue_cells(ctx.queue);
  // Stores only on change: two RX workers admitting to one queue then share its state's cache
  // line read-only, instead of taking it from each other on every frame (bench: BM_Decide with
  // 2 threads).
  if (q == 0 && !s.armed.load(kRelaxed)) s.armed.store(true, kRelaxed);
  if (s.uncontrolled.load(kRelaxed)) {
    const bool stopped_growing = q < s.last_len.load(kRelaxed);
    const bool timed_out =
        static_cast<double>(ctx.now_ns - std::min(ctx.now_ns, s.since_ns.load(kRelaxed))) >
        time_limit_ns_;
    if (stopped_growing || timed_out) {
      s.uncontrolled.store(false, kRelaxed);
      s.armed.store(q == 0, kRelaxed);
      (stopped_growing ? s.ended_shrinking : s.ended_time_limit).fetch_add(1, kRelaxed);
    }
  } else if (s.armed.load(kRelaxed) && q <= near_empty_) {
    s.uncontrolled.store(true, kRelaxed);
    s.armed.store(false, kRelaxed);
    s.since_ns.store(ctx.now_ns, kRelaxed);
    s.started.fetch_add(1, kRelaxed);
  }
  if (s.last_len.load(kRelaxed) != q) s.last_len.store(q, kRelaxed);
  // A frame that does not fit is refused for that (pool_full), in either state.
  if (ctx.cells > view.remaining_cells()) return Verdict::drop(DropReason::kPoolFull);
  if (q < alphas_[ctx.class_id] * view.remaining_cells()) return Verdict::accept();
  if (!s.uncontrolled.load(kRelaxed)) return Verdict::drop(DropReason::kThreshold);
  s.admitted_over_dt.fetch_add(1, kRelaxed);
  return Verdict::accept();
}

void EdtPolicy::on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept {
  if (view.queue_cells(ev.queue) == 0)
    state_[ev.queue].armed.store(true, std::memory_order_relaxed);
}

uint32_t EdtPolicy::threshold_cells(uint32_t queue, uint8_t class_id,
                                    const BufferView& view) const noexcept {
  const double t = uncontrolled(queue) ? view.queue_cells(queue) + view.remaining_cells()
                                       : std::ceil(alphas_[class_id] * view.remaining_cells());
  return static_cast<uint32_t>(std::min<double>(t, view.capacity_cells()));
}

nlohmann::json EdtPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json states = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    states.push_back(uncontrolled(q)                                   ? "uncontrolled"
                     : state_[q].armed.load(std::memory_order_relaxed) ? "controlled"
                                                                       : "controlled (disarmed)");
  }
  d["state"]["queues"] = states;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  uint64_t started = 0, shrinking = 0, time_limit = 0, over_dt = 0;
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    started += state_[q].started.load(kRelaxed);
    shrinking += state_[q].ended_shrinking.load(kRelaxed);
    time_limit += state_[q].ended_time_limit.load(kRelaxed);
    over_dt += state_[q].admitted_over_dt.load(kRelaxed);
  }
  d["state"]["bursts"] = {{"started", started},
                          {"ended_shrinking", shrinking},
                          {"ended_time_limit", time_limit},
                          {"admitted_over_dt", over_dt}};
  return d;
}

}  // namespace sharebuf::policies

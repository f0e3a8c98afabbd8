#include "policies/protean.h"

#include <algorithm>
#include <cmath>

#include "policies/log2_tables.h"
#include "policies/queue_gradient.h"

namespace sharebuf::policies {

ProteanPolicy::ProteanPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_incast_ = reader.number("alpha_incast");
  alpha_long_ = reader.number("alpha_long");
  beta_ = reader.number("beta");
  buildup_ = reader.number("buildup");
  tofino_ = reader.choice("arithmetic") == "tofino";
  sync_probe_ = reader.choice("sync") == "probe";
  set_params(reader.values());
  alpha_long_of_ = resolve_alphas(env, alpha_long_);
  alpha_incast_of_ = resolve_alphas(env, alpha_incast_);
  state_ = std::make_unique<QueueState[]>(env.layout->num_queues());
}

double ProteanPolicy::incast_threshold(uint32_t queue, const BufferView& view) const noexcept {
  // thr[q] is computed at q's dequeues, so an empty queue would keep the value of its last one
  // for good: a 0 (Rem was 0 then, or alpha * Rem < 1 cell in tofino arithmetic) would lock it
  // out, since no dequeue can come to lift it. An empty queue is held to the non-burst value
  // with today's Rem, as before its first dequeue.
  const double thr = state_[queue].thr.load(std::memory_order_relaxed);
  if (thr < 0 || view.queue_cells(queue) == 0) return alpha_incast_ * view.remaining_cells();
  return thr;
}

Verdict ProteanPolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  const uint32_t rem = view.remaining_cells();
  bool ok;
  switch (env().role_of_class(ctx.class_id)) {
    case ProteanRole::kShort:
      ok = ctx.cells < rem;
      break;
    case ProteanRole::kLong:
      ok = view.queue_cells(ctx.queue) < alpha_long_of_[ctx.class_id] * rem;
      break;
    case ProteanRole::kIncast:
    default: {
      // The egress computed thr with alpha_incast; a class alpha rescales it.
      const double scale = alpha_incast_of_[ctx.class_id] / alpha_incast_;
      ok = view.queue_cells(ctx.queue) < scale * incast_threshold(ctx.queue, view);
      break;
    }
  }
  return ok ? Verdict::accept() : Verdict::drop(DropReason::kThreshold);
}

void ProteanPolicy::on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept {
  if (sync_probe_) return;
  const uint64_t t_prev = state_[ev.queue].t_prev.load(std::memory_order_relaxed);
  update(ev.queue, ev.port, view.queue_cells(ev.queue), ev.now_ns,
         ev.now_ns > t_prev ? ev.now_ns - t_prev : 0, 0, view.remaining_cells());
}

void ProteanPolicy::on_probe(const BufferView& registers, uint64_t boundary_ns,
                             uint64_t interval_ns) noexcept {
  if (!sync_probe_) return;
  const BufferLayout& layout = registers.layout();
  const double rem = registers.remaining_cells();
  for (uint32_t q = 0; q < layout.num_queues(); ++q) {
    const uint64_t t_prev = state_[q].t_prev.load(std::memory_order_relaxed);
    if (boundary_ns <= t_prev) continue;
    // This snapshot stands for every boundary since the previous one: the change happened in the
    // first interval, the others saw none (buffer/probe_registers.h).
    const uint64_t intervals = (boundary_ns - t_prev) / std::max<uint64_t>(1, interval_ns);
    const uint64_t dt = t_prev == 0 ? boundary_ns : std::min(boundary_ns - t_prev, interval_ns);
    update(q, layout.port_of(q), registers.queue_cells(q), boundary_ns, dt,
           t_prev == 0 || intervals == 0 ? 0 : intervals - 1, rem);
  }
}

void ProteanPolicy::update(uint32_t queue, uint32_t port, uint32_t q, uint64_t t_ns, uint64_t dt_ns,
                           uint64_t quiet, double rem) noexcept {
  QueueState& s = state_[queue];
  const uint32_t q_prev = s.q_prev.load(std::memory_order_relaxed);
  double g = s.g_prev.load(std::memory_order_relaxed);
  if (dt_ns > 0) {
    const double rate_cells_per_ns = env().rate_cells_per_s(port) * 1e-9;
    double g_raw;
    if (tofino_) {
      // Eq. 4: 2^(log2 |dQ| - log2 dT - log2 rate); the sign is kept aside, as a P4 program
      // does with a sign bit.
      const Log2Tables& t = log2_tables();
      const uint64_t dq = q >= q_prev ? q - q_prev : q_prev - q;
      const int32_t log_rate =
          static_cast<int32_t>(std::lround(std::log2(rate_cells_per_ns) * 256));
      g_raw = dq == 0 ? 0 : t.exp2_fixed(t.log2_fixed(dq) - t.log2_fixed(dt_ns) - log_rate);
      if (q < q_prev) g_raw = -g_raw;
    } else {
      g_raw = normalised_gradient(q, q_prev, dt_ns, rate_cells_per_ns);
    }
    g = beta_ * g_raw + (1 - beta_) * g;
    // Samples of no change: each keeps (1 - beta) of the average.
    if (quiet > 0)
      g *= std::pow(1 - beta_, static_cast<double>(std::min<uint64_t>(quiet, 1u << 20)));
    s.q_prev.store(q, std::memory_order_relaxed);
    s.t_prev.store(t_ns, std::memory_order_relaxed);
    s.g_prev.store(g, std::memory_order_relaxed);
  }
  double thr;
  if (g > buildup_) {
    // Eq. 5: 2^(log2 g + log2(alpha * Rem)) in Tofino arithmetic.
    thr = tofino_ ? log2_tables().multiply(g, static_cast<uint64_t>(alpha_incast_ * rem))
                  : g * alpha_incast_ * rem;
  } else {
    thr = alpha_incast_ * rem;
  }
  s.thr.store(thr, std::memory_order_relaxed);
}

uint32_t ProteanPolicy::threshold_cells(uint32_t queue, uint8_t class_id,
                                        const BufferView& view) const noexcept {
  double t;
  switch (env().role_of_class(class_id)) {
    case ProteanRole::kShort:
      t = view.queue_cells(queue) + view.remaining_cells();
      break;
    case ProteanRole::kLong:
      t = alpha_long_of_[class_id] * view.remaining_cells();
      break;
    default:
      t = alpha_incast_of_[class_id] / alpha_incast_ * incast_threshold(queue, view);
      break;
  }
  return static_cast<uint32_t>(std::min<double>(std::ceil(t), view.capacity_cells()));
}

nlohmann::json ProteanPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json gradients = nlohmann::json::array();
  nlohmann::json incast = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    gradients.push_back(gradient(q));
    incast.push_back(incast_threshold(q, view));
  }
  d["state"]["gradients"] = gradients;
  d["state"]["incast_thresholds_cells"] = incast;
  return d;
}

}  // namespace sharebuf::policies

#include "policies/protean.h"

#include <algorithm>
#include <cmath>

#include "policies/queue_gradient.h"
#include "policies/tofino_arithmetic.h"

namespace sharebuf::policies {

ProteanPolicy::ProteanPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_incast_ = reader.number("alpha_incast");
  alpha_long_ = reader.number("alpha_long");
  beta_ = reader.number("beta");
  buildup_ = reader.number("buildup");
  tofino_ = reader.choice("arithmetic") == "tofino";
  sync_probe_ = reader.choice("sync") == "probe";
  if (tofino_) {
    // What protean.p4 can do: the EWMA by shifts, alphas and rates as Q.8 logarithms.
    beta_shift_ = TofinoArithmetic::beta_shift(beta_);
    if (beta_shift_ < 0) {
      reader.fail("beta",
                  "must be 1, 1/2, 1/4, ... 1/32768 with arithmetic = \"tofino\" (the "
                  "EWMA is shifts and adds on the switch)");
    }
    log_alpha_incast_ = TofinoArithmetic::log_constant(alpha_incast_);
    log_alpha_long_ = TofinoArithmetic::log_constant(alpha_long_);
    buildup_q8_ = static_cast<int32_t>(std::lround(buildup_ * TofinoArithmetic::kOne));
    for (uint32_t p = 0; p < env.layout->num_ports(); ++p)
      log_rate_.push_back(log_rate_cells_per_ns(env.rate_cells_per_s(p)));
  }
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
  if (thr < 0 || view.queue_cells(queue) == 0) {
    return tofino_ ? tofino_arithmetic().scale(log_alpha_incast_, view.remaining_cells())
                   : alpha_incast_ * view.remaining_cells();
  }
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
      ok = view.queue_cells(ctx.queue) < (tofino_ ? tofino_long_threshold(ctx.class_id, rem)
                                                  : alpha_long_of_[ctx.class_id] * rem);
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
  if (tofino_) {
    update_tofino(queue, port, q, t_ns, dt_ns, quiet, rem);
    return;
  }
  QueueState& s = state_[queue];
  const uint32_t q_prev = s.q_prev.load(std::memory_order_relaxed);
  double g = s.g_prev.load(std::memory_order_relaxed);
  if (dt_ns > 0) {
    const double rate_cells_per_ns = env().rate_cells_per_s(port) * 1e-9;
    const double g_raw = normalised_gradient(q, q_prev, dt_ns, rate_cells_per_ns);
    g = beta_ * g_raw + (1 - beta_) * g;
    // Samples of no change: each keeps (1 - beta) of the average.
    if (quiet > 0)
      g *= std::pow(1 - beta_, static_cast<double>(std::min<uint64_t>(quiet, 1u << 20)));
    s.q_prev.store(q, std::memory_order_relaxed);
    s.t_prev.store(t_ns, std::memory_order_relaxed);
    s.g_prev.store(g, std::memory_order_relaxed);
  }
  s.thr.store(g > buildup_ ? g * alpha_incast_ * rem : alpha_incast_ * rem,
              std::memory_order_relaxed);
}

void ProteanPolicy::update_tofino(uint32_t queue, uint32_t port, uint32_t q, uint64_t t_ns,
                                  uint64_t dt_ns, uint64_t quiet, double rem) noexcept {
  // protean.p4's probe pass, step by step (p4/protean.p4): the same tables, the same Q.8
  // integers, the same shifts.
  const TofinoArithmetic& a = tofino_arithmetic();
  QueueState& s = state_[queue];
  const uint32_t q_prev = s.q_prev.load(std::memory_order_relaxed);
  int32_t g = static_cast<int32_t>(
      std::lround(s.g_prev.load(std::memory_order_relaxed) * TofinoArithmetic::kOne));
  if (dt_ns > 0) {
    const uint32_t dq = q >= q_prev ? q - q_prev : q_prev - q;
    const uint32_t dt = static_cast<uint32_t>(std::min<uint64_t>(dt_ns, UINT32_MAX));
    int32_t g_raw = a.gradient_q8(dq, dt, log_rate_[port]);  // Eq. 4, the sign aside
    if (q < q_prev) g_raw = -g_raw;
    g = g - (g >> beta_shift_) + (g_raw >> beta_shift_);
    for (uint64_t i = 0; i < quiet && g != 0 && g != -1; ++i)
      g -= g >> beta_shift_;  // a probe of no change
    s.q_prev.store(q, std::memory_order_relaxed);
    s.t_prev.store(t_ns, std::memory_order_relaxed);
    s.g_prev.store(static_cast<double>(g) / TofinoArithmetic::kOne, std::memory_order_relaxed);
  }
  const uint32_t r = static_cast<uint32_t>(std::max(0.0, rem));
  // Eq. 5 above buildup; DT's alpha x Rem below it; both through the tables.
  s.thr.store(g > buildup_q8_ ? a.scale(g, log_alpha_incast_, r) : a.scale(log_alpha_incast_, r),
              std::memory_order_relaxed);
}

double ProteanPolicy::tofino_long_threshold(uint8_t class_id, uint32_t rem) const noexcept {
  // protean.p4 publishes alpha_long x Rem with Rem; a class alpha of its own enters the same way.
  const double alpha = alpha_long_of_[class_id];
  const int32_t log_alpha =
      alpha == alpha_long_ ? log_alpha_long_ : TofinoArithmetic::log_constant(alpha);
  return tofino_arithmetic().scale(log_alpha, rem);
}

uint32_t ProteanPolicy::threshold_cells(uint32_t queue, uint8_t class_id,
                                        const BufferView& view) const noexcept {
  double t;
  switch (env().role_of_class(class_id)) {
    case ProteanRole::kShort:
      t = view.queue_cells(queue) + view.remaining_cells();
      break;
    case ProteanRole::kLong:
      t = tofino_ ? tofino_long_threshold(class_id, view.remaining_cells())
                  : alpha_long_of_[class_id] * view.remaining_cells();
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

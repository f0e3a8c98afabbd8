#include "policies/smartbuf.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "policies/queue_gradient.h"

namespace sharebuf::policies {

SmartbufPolicy::SmartbufPolicy(const Params& params, const PolicyEnv& env)
    : Policy(env), map_(1, 0) {
  ParamReader reader(kName, params, kParams);
  alpha_ = reader.number("alpha");
  beta_ = reader.number("beta");
  sigma_ = reader.number("sigma");
  k_ = static_cast<uint32_t>(reader.integer("k"));
  ttl_s_ = reader.number("ttl_s");
  max_entries_ = static_cast<uint32_t>(reader.integer("max_entries"));
  weight_ = reader.number("gradient_weight");
  sync_probe_ = reader.choice("sync") == "probe";
  set_params(reader.values());
  burst_cells_ = env.layout->capacity_cells() / sigma_;
  alphas_ = resolve_alphas(env, alpha_);
  state_ = std::make_unique<QueueState[]>(env.layout->num_queues());
  map_ = SmartbufMap(max_entries_, static_cast<uint64_t>(ttl_s_ * 1e9));
}

void SmartbufPolicy::on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept {
  if (sync_probe_) return;
  const uint64_t t_prev = state_[ev.queue].t_prev.load(std::memory_order_relaxed);
  sample(ev.queue, ev.port, view.queue_cells(ev.queue), ev.now_ns,
         ev.now_ns > t_prev ? ev.now_ns - t_prev : 0);
}

void SmartbufPolicy::on_probe(const BufferView& registers, uint64_t boundary_ns,
                              uint64_t interval_ns) noexcept {
  if (!sync_probe_) return;
  const BufferLayout& layout = registers.layout();
  const uint64_t step = std::max<uint64_t>(1, interval_ns);
  for (uint32_t q = 0; q < layout.num_queues(); ++q) {
    const uint64_t t_prev = state_[q].t_prev.load(std::memory_order_relaxed);
    if (boundary_ns <= t_prev) continue;
    const uint32_t cur = registers.queue_cells(q);
    if (t_prev == 0) {  // the first sample: no history, as the first dequeue
      sample(q, layout.port_of(q), cur, boundary_ns, boundary_ns);
      continue;
    }
    // This snapshot stands for every boundary since the previous one: the change happened in the
    // first interval, the later ones sampled the same length (buffer/probe_registers.h). Two
    // such samples reach the state machine's fixed point (a burst that ends restarts max_seen
    // at the next sample), so the quiet ones between the second and the last only decay the
    // gradient.
    const uint32_t port = layout.port_of(q);
    const uint64_t n = std::max<uint64_t>(1, (boundary_ns - t_prev) / step);
    for (uint64_t k = 1; k <= std::min<uint64_t>(n, 2); ++k)
      sample(q, port, cur, k == n ? boundary_ns : t_prev + k * step, step);
    if (n > 2) {
      if (n > 3) {
        QueueState& s = state_[q];
        const double decay =
            std::pow(1 - weight_, static_cast<double>(std::min<uint64_t>(n - 3, 1u << 20)));
        s.g.store(s.g.load(std::memory_order_relaxed) * decay, std::memory_order_relaxed);
      }
      sample(q, port, cur, boundary_ns, step);
    }
  }
}

void SmartbufPolicy::sample(uint32_t queue, uint32_t port, uint32_t cur, uint64_t t_ns,
                            uint64_t dt_ns) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  QueueState& s = state_[queue];
  double g = s.g.load(kRelaxed);
  if (dt_ns > 0) {
    const double g_raw = normalised_gradient(cur, s.q_prev.load(kRelaxed), dt_ns,
                                             env().rate_cells_per_s(port) * 1e-9);
    g = weight_ * g_raw + (1 - weight_) * g;
    s.q_prev.store(cur, kRelaxed);
    s.t_prev.store(t_ns, kRelaxed);
    s.g.store(g, kRelaxed);
  }
  const uint64_t now_ns = t_ns;
  uint32_t max_seen = s.max_seen.load(kRelaxed);
  if (cur > max_seen) {
    max_seen = cur;
    s.max_seen.store(max_seen, kRelaxed);
    s.g_at_max.store(g, kRelaxed);
  } else if (cur < beta_ * max_seen) {
    if (max_seen > burst_cells_) {
      const double signature = s.g_at_max.load(kRelaxed);
      const double predicted = s.thr.load(kRelaxed);
      std::lock_guard lock(map_lock_);
      map_.expire(now_ns);
      map_.insert(signature, max_seen, now_ns);
      bursts_[bursts_seen_++ % kBurstRing] =
          Burst{now_ns, queue, signature,
                predicted >= 0 ? static_cast<uint32_t>(std::lround(predicted)) : 0, max_seen};
    }
    max_seen = 0;
    s.max_seen.store(0, kRelaxed);
    s.g_at_max.store(0, kRelaxed);
  }

  double thr = -1;
  if (max_seen > burst_cells_) {
    std::lock_guard lock(map_lock_);
    map_.expire(now_ns);
    if (map_.size() >= k_) {
      if (const auto mean = map_.mean_of_nearest_larger(g, k_)) thr = *mean;
    }
  }
  s.thr.store(thr, kRelaxed);
}

std::optional<double> SmartbufPolicy::learned_threshold(uint32_t queue) const noexcept {
  const double thr = state_[queue].thr.load(std::memory_order_relaxed);
  if (thr < 0) return std::nullopt;
  return thr;
}

bool SmartbufPolicy::learning() const {
  std::lock_guard lock(map_lock_);
  return map_.size() < k_;
}

std::vector<SmartbufMap::Entry> SmartbufPolicy::map_entries() const {
  std::lock_guard lock(map_lock_);
  return map_.entries();
}

std::vector<SmartbufPolicy::Burst> SmartbufPolicy::bursts() const {
  std::lock_guard lock(map_lock_);
  std::vector<Burst> out;
  const uint64_t first = bursts_seen_ > kBurstRing ? bursts_seen_ - kBurstRing : 0;
  for (uint64_t i = first; i < bursts_seen_; ++i)
    out.push_back(bursts_[i % kBurstRing]);
  return out;
}

uint32_t SmartbufPolicy::threshold_cells(uint32_t queue, uint8_t class_id,
                                         const BufferView& view) const noexcept {
  return static_cast<uint32_t>(
      std::min<double>(std::ceil(threshold(queue, class_id, view)), view.capacity_cells()));
}

nlohmann::json SmartbufPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json queues = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    const auto learned = learned_threshold(q);
    queues.push_back({{"gradient", gradient(q)},
                      {"max_seen_cells", max_seen(q)},
                      {"learned_threshold_cells", learned ? nlohmann::json(*learned) : nullptr}});
  }
  nlohmann::json map = nlohmann::json::array();
  for (const SmartbufMap::Entry& e : map_entries())
    map.push_back({{"gradient", e.gradient}, {"max_cells", e.max_cells}});
  nlohmann::json bursts = nlohmann::json::array();
  for (const Burst& b : this->bursts()) {
    bursts.push_back({{"end_ns", b.end_ns},
                      {"queue", b.queue},
                      {"gradient", b.gradient},
                      {"predicted_cells", b.predicted_cells},
                      {"peak_cells", b.peak_cells}});
  }
  d["state"]["phase"] = learning() ? "learning" : "real";
  d["state"]["queues"] = queues;
  d["state"]["map"] = map;
  d["state"]["bursts"] = bursts;
  return d;
}

}  // namespace sharebuf::policies

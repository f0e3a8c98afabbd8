#include "policies/ib.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace sharebuf::policies {

namespace {

// splitmix64's finaliser: a counter's value to 64 well-mixed bits.
uint64_t mix(uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

IbPolicy::IbPolicy(const Params& params, const PolicyEnv& env)
    : IbPolicy(ParamReader(kName, params, kParams), env) {}

IbPolicy::IbPolicy(const ParamReader& reader, const PolicyEnv& env)
    : Policy(env),
      alpha_(reader.number("alpha")),
      alphas_(resolve_alphas(env, alpha_)),
      window_ns_(static_cast<uint64_t>(std::llround(reader.number("afd_window_us") * 1000))),
      qref_bytes_(static_cast<double>(reader.integer("qref_bytes"))),
      seed_(static_cast<uint64_t>(reader.integer("seed"))),
      queues_(std::make_unique<QueueAfd[]>(env.layout->num_queues())),
      ports_(std::make_unique<PortWindow[]>(env.layout->num_ports())),
      as_coded_(reader.choice("variant") == "as-coded"),
      dpp_packets_(reader.integer("dpp_packets")),
      dpp_queue_(static_cast<uint32_t>(reader.integer("dpp_queue"))),
      dpp_flows_(dpp_packets_ == 0 ? 16 : 4096, reader.number("dpp_window_us") * 1000) {
  const uint64_t min_bytes = static_cast<uint64_t>(reader.integer("afd_min_queue_bytes"));
  afd_min_cells_ =
      static_cast<uint32_t>(std::min<uint64_t>(min_bytes / env.layout->cell_bytes(), UINT32_MAX));
  const double mfair = reader.number("mfair_start_bytes");
  for (uint32_t q = 0; q < env.layout->num_queues(); ++q)
    queues_[q].mfair.store(mfair, std::memory_order_relaxed);
  set_params(reader.values());
}

void IbPolicy::roll_window(uint32_t port, uint64_t now_ns, const BufferView& view) noexcept {
  PortWindow& w = ports_[port];
  std::unique_lock guard(w.lock, std::try_to_lock);
  if (!guard.owns_lock()) return;
  if (now_ns <= w.start_ns.load(std::memory_order_relaxed) + window_ns_) return;
  const BufferLayout& layout = view.layout();
  const double cell = layout.cell_bytes();
  for (uint32_t q = layout.first_queue(port);
       q < layout.first_queue(port) + layout.queues_on_port(port); ++q) {
    QueueAfd& a = queues_[q];
    a.last.store(a.arrived.exchange(1, std::memory_order_relaxed), std::memory_order_relaxed);
    const double qnow = view.queue_cells(q) * cell;
    const double mfair = a.mfair.load(std::memory_order_relaxed) - kA1 * (qnow - qref_bytes_) +
                         kA2 * (a.qold - qref_bytes_);
    a.mfair.store(std::max(0.0, mfair), std::memory_order_relaxed);
    a.qold = qnow;
  }
  w.start_ns.store(now_ns, std::memory_order_relaxed);
}

double IbPolicy::drop_probability(uint32_t q) const noexcept {
  const double m =
      kShareScale * static_cast<double>(queues_[q].last.load(std::memory_order_relaxed));
  return std::max(0.0, 1.0 - std::min(m, queues_[q].mfair.load(std::memory_order_relaxed)) / m);
}

double IbPolicy::draw() noexcept {
  const uint64_t n = draws_.fetch_add(1, std::memory_order_relaxed);
  return static_cast<double>(mix(seed_ ^ mix(n)) >> 11) * 0x1.0p-53;
}

Verdict IbPolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  if (ctx.now_ns > ports_[ctx.port].start_ns.load(std::memory_order_relaxed) + window_ns_)
    roll_window(ctx.port, ctx.now_ns, view);
  // DPP: a flow's first packets go to the priority queue under DT alone (as the authors' code:
  // the count includes this frame and must stay below dpp_packets).
  if (dpp_packets_ != 0 && ctx.flow_hash != 0 &&
      dpp_flows_.observe(ctx.flow_hash, ctx.now_ns, 1).bytes_before + 1 < dpp_packets_) {
    const BufferLayout& layout = view.layout();
    const uint32_t k = std::min(dpp_queue_, layout.queues_on_port(ctx.port) - 1);
    const uint32_t q = layout.queue_id(ctx.port, k);
    // The authors' code checks DynamicThresholds(DPPQueue, ...): queue 0's alpha.
    const double alpha = as_coded_ ? alphas_[env().class_of_queue(q)] : alphas_[ctx.class_id];
    if (!(view.queue_cells(q) < alpha * view.remaining_cells()))
      return Verdict::drop(DropReason::kThreshold);
    return q == ctx.queue ? Verdict::accept() : Verdict::accept_into(q);
  }
  QueueAfd& a = queues_[ctx.queue];
  a.arrived.fetch_add(ctx.bytes, std::memory_order_relaxed);
  const uint32_t queued = view.queue_cells(ctx.queue);
  if (!(queued < alphas_[ctx.class_id] * view.remaining_cells()))
    return Verdict::drop(DropReason::kThreshold);
  if (as_coded_) {
    if (as_coded_afd_drop(ctx, view)) {
      a.afd_drops.fetch_add(1, std::memory_order_relaxed);
      return Verdict::drop(DropReason::kThreshold);
    }
    return Verdict::accept();
  }
  if (queued > afd_min_cells_) {
    const double p = drop_probability(ctx.queue);
    if (p > 0 && draw() < p) {
      a.afd_drops.fetch_add(1, std::memory_order_relaxed);
      return Verdict::drop(DropReason::kThreshold);
    }
  }
  return Verdict::accept();
}

// DropAfd(prob = the arrival's queue index k within its port, priority = uint32_t(dropP)): one
// draw x in [0, 1) (theirs: rand() / RAND_MAX), then x < k and the port's queue `priority` longer
// than the floor. dropP is in [0, 1] and 1 exactly when uint32_t(MFair) is 0, so `priority` is
// queue 0 unless the fair share is below one byte.
bool IbPolicy::as_coded_afd_drop(const ArrivalContext& ctx, const BufferView& view) noexcept {
  const BufferLayout& layout = view.layout();
  const uint32_t k = ctx.queue - layout.first_queue(ctx.port);
  const double x = draw();
  if (!(x < static_cast<double>(k))) return false;
  const uint32_t checked = queues_[ctx.queue].mfair.load(std::memory_order_relaxed) < 1.0 ? 1 : 0;
  return view.queue_cells(layout.queue_id(ctx.port, checked)) > afd_min_cells_;
}

uint32_t IbPolicy::threshold_cells(uint32_t, uint8_t class_id,
                                   const BufferView& view) const noexcept {
  return dt_threshold_cells(alphas_[class_id], view);
}

nlohmann::json IbPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json afd = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    const QueueAfd& a = queues_[q];
    afd.push_back({{"queue", q},
                   {"mfair_bytes", a.mfair.load(std::memory_order_relaxed)},
                   {"arrived_last_window_bytes", a.last.load(std::memory_order_relaxed)},
                   {"drop_probability", drop_probability(q)},
                   {"afd_drops", a.afd_drops.load(std::memory_order_relaxed)}});
  }
  d["state"]["afd"] = afd;
  return d;
}

}  // namespace sharebuf::policies

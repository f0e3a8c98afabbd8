#include "datapath/tofino_approx.h"

#include <algorithm>
#include <mutex>

namespace sharebuf::datapath {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}

TofinoApprox::TofinoApprox(uint32_t pipelines, std::vector<uint64_t> line_rate_bps)
    : line_rate_(std::move(line_rate_bps)),
      counters_(std::make_unique<PortCounters[]>(line_rate_.size())) {
  for (uint32_t i = 0; i < std::max<uint32_t>(1, pipelines); ++i)
    pipes_.push_back(std::make_unique<Pipeline>(line_rate_.size()));
}

IngressMeterSettings TofinoApprox::meter_settings(uint32_t out_port) const noexcept {
  return {.variant = static_cast<MeterVariant>(settings.variant.load(kRelaxed)),
          .line_rate_bps = line_rate_[out_port],
          .burst_bytes = settings.burst_bytes.load(kRelaxed),
          .t0_ns = settings.t0_ns.load(kRelaxed),
          .t1_ns = settings.t1_ns.load(kRelaxed)};
}

bool TofinoApprox::meter(uint32_t in_port, uint32_t out_port, uint32_t bytes,
                         uint64_t now_ns) noexcept {
  Pipeline& pipe = *pipes_[pipeline_of(in_port)];
  const IngressMeterSettings s = meter_settings(out_port);
  IngressPortState::Decision d;
  {
    std::lock_guard guard(pipe.lock);
    IngressPortState& st = pipe.states[out_port];
    // A NOTIFY that has reached this pipeline's ingress restarts the pessimistic state.
    const uint64_t n = pipe.notified[out_port].load(std::memory_order_acquire);
    if (n != pipe.applied[out_port] && n <= now_ns) {
      st.notify(n, s);
      pipe.applied[out_port] = n;
    }
    d = st.on_frame(bytes, now_ns, s);
  }
  PortCounters& c = counters_[out_port];
  if (d.changed) {
    auto& to = d.state == PortTrimState::kPessimistic       ? c.to_pessimistic
               : d.state == PortTrimState::kHalfPessimistic ? c.to_half
                                                            : c.to_optimistic;
    to.fetch_add(1, kRelaxed);
  }
  if (d.trim) c.ingress_trimmed.fetch_add(1, kRelaxed);
  return d.trim;
}

bool TofinoApprox::deflect(uint32_t in_port, Deflected&& d, uint32_t wire_bytes, uint64_t now_ns) {
  Pipeline& pipe = *pipes_[pipeline_of(in_port)];
  PortCounters& c = counters_[d.from.port];
  const uint64_t rate = settings.recirc_rate_bps.load(kRelaxed);
  const uint64_t rate_bps = rate != 0 ? rate : std::max<uint64_t>(1, line_rate_[d.from.port]);
  std::lock_guard guard(pipe.lock);
  // What the recirculation port still has to serialise, from when its wire is free: the bytes
  // queued there.
  const double backlog =
      pipe.recirc_free_ns > now_ns
          ? static_cast<double>(pipe.recirc_free_ns - now_ns) * static_cast<double>(rate_bps) / 8e9
          : 0.0;
  if (backlog + wire_bytes > settings.recirc_queue_bytes.load(kRelaxed)) {
    c.deflect_dropped.fetch_add(1, kRelaxed);
    return false;
  }
  const uint64_t start = std::max(now_ns, pipe.recirc_free_ns);
  pipe.recirc_free_ns = start + static_cast<uint64_t>(static_cast<double>(wire_bytes) * 8e9 /
                                                      static_cast<double>(rate_bps));
  d.leave_ns = pipe.recirc_free_ns + settings.recirc_latency_ns.load(kRelaxed);
  pipe.recirc.push_back(std::move(d));
  pipe.recirc_frames.fetch_add(1, std::memory_order_release);
  c.deflected.fetch_add(1, kRelaxed);
  return true;
}

bool TofinoApprox::any_deflected() const noexcept {
  for (const auto& p : pipes_) {
    if (p->recirc_frames.load(kRelaxed) != 0) return true;
  }
  return false;
}

void TofinoApprox::take_departed(uint64_t now_ns, std::vector<Deflected>& out) {
  const size_t first = out.size();
  for (auto& p : pipes_) {
    Pipeline& pipe = *p;
    if (pipe.recirc_frames.load(std::memory_order_acquire) == 0) continue;
    std::lock_guard guard(pipe.lock);
    while (!pipe.recirc.empty() && pipe.recirc.front().leave_ns <= now_ns) {
      out.push_back(std::move(pipe.recirc.front()));
      pipe.recirc.pop_front();
      pipe.recirc_frames.fetch_sub(1, kRelaxed);
    }
  }
  // Each departure is detected in egress and a NOTIFY recirculated to every pipeline: it
  // arrives one recirculation latency after the frame left.
  const uint64_t latency = settings.recirc_latency_ns.load(kRelaxed);
  for (size_t i = first; i < out.size(); ++i) {
    const uint32_t port = out[i].from.port;
    const uint64_t at = out[i].leave_ns + latency;
    for (auto& p : pipes_) {
      std::atomic<uint64_t>& n = p->notified[port];
      uint64_t cur = n.load(kRelaxed);
      while (cur < at && !n.compare_exchange_weak(cur, at, std::memory_order_release, kRelaxed)) {
      }
    }
    counters_[port].notifications.fetch_add(1, kRelaxed);
  }
}

PortTrimState TofinoApprox::state(uint32_t pipe_index, uint32_t port, uint64_t now_ns) const {
  Pipeline& pipe = *pipes_[pipe_index];
  std::lock_guard guard(pipe.lock);
  return pipe.states[port].state(now_ns);
}

}  // namespace sharebuf::datapath

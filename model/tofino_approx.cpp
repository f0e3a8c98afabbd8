#include "model/tofino_approx.h"

#include <algorithm>
#include <iterator>
#include <mutex>

namespace sharebuf::model {

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
          .pessimistic_share = settings.pessimistic_share.load(kRelaxed),
          .t0_ns = settings.t0_ns.load(kRelaxed),
          .t1_ns = settings.t1_ns.load(kRelaxed)};
}

bool TofinoApprox::meter(uint32_t in_port, uint32_t out_port, uint32_t bytes,
                         uint64_t now_ns) noexcept {
  Pipeline& pipe = *pipes_[pipeline_of(in_port)];
  const IngressMeterSettings s = meter_settings(out_port);
  if (s.variant == MeterVariant::kMirror) return false;  // Mirror-on-Drop: no meters
  IngressPortState::Decision d;
  {
    std::lock_guard guard(pipe.lock);
    apply_notes(pipe, now_ns);
    d = pipe.states[out_port].on_frame(bytes, now_ns, s);
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

void TofinoApprox::apply_notes(Pipeline& pipe, uint64_t now_ns) const noexcept {
  // A NOTIFY that has reached this pipeline's ingress restarts its port's pessimistic state from
  // its own arrival time (T0 and T1 count from there).
  while (!pipe.notes.empty() && pipe.notes.front().at_ns <= now_ns) {
    const Note n = pipe.notes.front();
    pipe.notes.pop_front();
    pipe.states[n.port].notify(n.at_ns, meter_settings(n.port));
  }
}

bool TofinoApprox::deflect(uint32_t in_port, Deflected&& d, uint32_t wire_bytes, uint64_t now_ns,
                           buffer::BufferState& buffer) {
  Pipeline& pipe = *pipes_[pipeline_of(in_port)];
  PortCounters& c = counters_[d.from.port];
  const uint64_t rate = settings.recirc_rate_bps.load(kRelaxed);
  const uint64_t rate_bps = rate != 0 ? rate : std::max<uint64_t>(1, line_rate_[d.from.port]);
  // Mirror-on-Drop: only the header crosses the mirror port (and holds cells); the frame is
  // dropped where the buffer refused it.
  if (static_cast<MeterVariant>(settings.variant.load(kRelaxed)) == MeterVariant::kMirror)
    wire_bytes = static_cast<uint32_t>(d.cut.size());
  std::lock_guard guard(pipe.lock);
  // What the recirculation port still has to serialise, from when its wire is free: the bytes
  // queued there.
  const double backlog =
      pipe.recirc_free_ns > now_ns
          ? static_cast<double>(pipe.recirc_free_ns - now_ns) * static_cast<double>(rate_bps) / 8e9
          : 0.0;
  d.cells = buffer.layout().cells_for(wire_bytes);
  if (backlog + wire_bytes > settings.recirc_queue_bytes.load(kRelaxed) ||
      !buffer.try_reserve_outside(d.cells)) {
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
  // Frames the port still has to serialise (the rest are on their way back to ingress).
  const uint64_t latency = settings.recirc_latency_ns.load(kRelaxed);
  uint32_t held = 0;
  for (auto it = pipe.recirc.rbegin(); it != pipe.recirc.rend() && it->leave_ns - latency > now_ns;
       ++it)
    ++held;
  uint32_t peak = c.deflect_queue_peak.load(kRelaxed);
  while (held > peak && !c.deflect_queue_peak.compare_exchange_weak(peak, held, kRelaxed)) {
  }
  return true;
}

void TofinoApprox::reset_peaks() noexcept {
  for (size_t p = 0; p < line_rate_.size(); ++p)
    counters_[p].deflect_queue_peak.store(0, kRelaxed);
}

bool TofinoApprox::any_deflected() const noexcept {
  for (const auto& p : pipes_) {
    if (p->recirc_frames.load(kRelaxed) != 0) return true;
  }
  return false;
}

uint64_t TofinoApprox::next_departure_ns() const {
  uint64_t first = UINT64_MAX;
  for (const auto& p : pipes_) {
    Pipeline& pipe = *p;
    if (pipe.recirc_frames.load(std::memory_order_acquire) == 0) continue;
    std::lock_guard guard(pipe.lock);
    if (!pipe.recirc.empty()) first = std::min(first, pipe.recirc.front().leave_ns);
  }
  return first;
}

void TofinoApprox::take_departed(uint64_t now_ns, std::vector<Deflected>& out,
                                 buffer::BufferState& buffer) {
  const size_t first = out.size();
  for (auto& p : pipes_) {
    Pipeline& pipe = *p;
    if (pipe.recirc_frames.load(std::memory_order_acquire) == 0) continue;
    std::lock_guard guard(pipe.lock);
    while (!pipe.recirc.empty() && pipe.recirc.front().leave_ns <= now_ns) {
      // Its cells come back as it leaves: the trimmed copy made of it then takes its own.
      buffer.release_outside(pipe.recirc.front().cells);
      out.push_back(std::move(pipe.recirc.front()));
      pipe.recirc.pop_front();
      pipe.recirc_frames.fetch_sub(1, kRelaxed);
    }
  }
  // Each departure is detected in egress and a NOTIFY recirculated to every pipeline: it
  // arrives one recirculation latency after the frame left, and is queued there in arrival order
  // (departures of different pipelines interleave, so it is inserted, mostly at the back).
  if (out.size() == first) return;
  // Mirror-on-Drop has no meters to notify.
  if (static_cast<MeterVariant>(settings.variant.load(kRelaxed)) == MeterVariant::kMirror) return;
  const uint64_t latency = settings.recirc_latency_ns.load(kRelaxed);
  for (auto& p : pipes_) {
    Pipeline& pipe = *p;
    std::lock_guard guard(pipe.lock);
    apply_notes(pipe, now_ns);  // what has arrived acts now, so the queue holds one latency
    for (size_t i = first; i < out.size(); ++i) {
      const Note n{out[i].leave_ns + latency, out[i].from.port};
      auto at = pipe.notes.end();
      while (at != pipe.notes.begin() && std::prev(at)->at_ns > n.at_ns)
        --at;
      pipe.notes.insert(at, n);
    }
  }
  for (size_t i = first; i < out.size(); ++i)
    counters_[out[i].from.port].notifications.fetch_add(1, kRelaxed);
}

void TofinoApprox::discard_all(buffer::BufferState& buffer) {
  for (auto& p : pipes_) {
    Pipeline& pipe = *p;
    std::lock_guard guard(pipe.lock);
    for (const Deflected& d : pipe.recirc)
      buffer.release_outside(d.cells);
    pipe.recirc.clear();
    pipe.recirc_frames.store(0, kRelaxed);
  }
}

PortTrimState TofinoApprox::state(uint32_t pipe_index, uint32_t port, uint64_t now_ns) const {
  Pipeline& pipe = *pipes_[pipe_index];
  std::lock_guard guard(pipe.lock);
  apply_notes(pipe, now_ns);
  return pipe.states[port].state(now_ns);
}

}  // namespace sharebuf::model

#include "model/ingress_meters.h"

#include <algorithm>

namespace sharebuf::model {

std::string_view to_string(PortTrimState s) noexcept {
  switch (s) {
    case PortTrimState::kOptimistic:
      return "optimistic";
    case PortTrimState::kHalfPessimistic:
      return "half";
    case PortTrimState::kPessimistic:
      return "pessimistic";
  }
  return "?";
}

std::string_view to_string(MeterVariant v) noexcept {
  switch (v) {
    case MeterVariant::kThreeMeters:
      return "three";
    case MeterVariant::kTwoMeters:
      return "two";
    case MeterVariant::kFixed:
      return "fixed";
    case MeterVariant::kMirror:
      return "mirror";
  }
  return "?";
}

std::optional<MeterVariant> meter_variant(std::string_view name) noexcept {
  for (const MeterVariant v : {MeterVariant::kThreeMeters, MeterVariant::kTwoMeters,
                               MeterVariant::kFixed, MeterVariant::kMirror}) {
    if (to_string(v) == name) return v;
  }
  return std::nullopt;
}

bool TokenMeterBucket::has(uint32_t bytes, uint64_t now_ns, uint64_t rate_bps,
                           uint32_t burst_bytes) noexcept {
  const double depth = burst_bytes;
  if (tokens_ < 0) {
    tokens_ = depth;
  } else if (now_ns > last_ns_) {
    const double earned =
        static_cast<double>(now_ns - last_ns_) * static_cast<double>(rate_bps) / 8e9;
    tokens_ = std::min(depth, tokens_ + earned);
  }
  last_ns_ = std::max(last_ns_, now_ns);
  tokens_ = std::min(tokens_, depth);  // a live change to a smaller depth
  return tokens_ >= bytes;
}

MeterColor TwoRateMeter::execute(uint32_t bytes, uint64_t now_ns, uint64_t pir_bps,
                                 uint64_t cir_bps, uint32_t burst_bytes) noexcept {
  const bool peak = peak_.has(bytes, now_ns, pir_bps, burst_bytes);
  const bool committed = committed_.has(bytes, now_ns, cir_bps, burst_bytes);
  if (!peak) return MeterColor::kRed;
  peak_.take(bytes);
  if (!committed) return MeterColor::kYellow;
  committed_.take(bytes);
  return MeterColor::kGreen;
}

void IngressPortState::notify(uint64_t at_ns, const IngressMeterSettings& s) noexcept {
  t0_reg_ = at_ns + s.t0_ns;
  t1_reg_ = at_ns + std::max(s.t0_ns, s.t1_ns);
}

PortTrimState IngressPortState::state(uint64_t now_ns) const noexcept {
  if (t1_reg_ == 0) return PortTrimState::kOptimistic;
  if (now_ns <= t0_reg_) return PortTrimState::kPessimistic;
  if (now_ns <= t1_reg_) return PortTrimState::kHalfPessimistic;
  return PortTrimState::kOptimistic;
}

IngressPortState::Decision IngressPortState::on_frame(uint32_t bytes, uint64_t now_ns,
                                                      const IngressMeterSettings& s) noexcept {
  Decision d;
  if (s.variant == MeterVariant::kMirror) return d;  // no meters: everything reaches the buffer
  if (s.variant == MeterVariant::kFixed) {
    // No congestion states: notifications change nothing, the line-rate meter decides.
    d.trim = full_.execute(bytes, now_ns, s.line_rate_bps, s.line_rate_bps, s.burst_bytes) ==
             MeterColor::kRed;
    return d;
  }
  d.state = state(now_ns);
  if (d.state == PortTrimState::kOptimistic) t0_reg_ = t1_reg_ = 0;  // the paper's reset
  d.changed = d.state != last_;
  last_ = d.state;
  const uint64_t line = s.line_rate_bps;
  const uint64_t pessimistic =
      static_cast<uint64_t>(static_cast<double>(line) * std::clamp(s.pessimistic_share, 0.0, 1.0));
  const uint64_t half_rate = std::min(line, 2 * pessimistic);
  // Every meter runs on every frame, as the P4 program executes them before choosing.
  if (s.variant == MeterVariant::kThreeMeters) {
    const MeterColor full = full_.execute(bytes, now_ns, line, line, s.burst_bytes);
    const MeterColor half = half_.execute(bytes, now_ns, half_rate, half_rate, s.burst_bytes);
    const MeterColor quarter =
        quarter_.execute(bytes, now_ns, pessimistic, pessimistic, s.burst_bytes);
    const MeterColor c = d.state == PortTrimState::kPessimistic       ? quarter
                         : d.state == PortTrimState::kHalfPessimistic ? half
                                                                      : full;
    d.trim = c == MeterColor::kRed;
    return d;
  }
  const MeterColor opti = full_.execute(bytes, now_ns, line, half_rate, s.burst_bytes);
  const MeterColor pesi = quarter_.execute(bytes, now_ns, pessimistic, pessimistic, s.burst_bytes);
  switch (d.state) {
    case PortTrimState::kPessimistic:
      d.trim = pesi != MeterColor::kGreen;
      break;
    case PortTrimState::kHalfPessimistic:
      d.trim = opti != MeterColor::kGreen;
      break;
    case PortTrimState::kOptimistic:
      d.trim = opti == MeterColor::kRed;
      break;
  }
  return d;
}

}  // namespace sharebuf::model

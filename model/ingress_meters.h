// The Tofino approximation of trimming's ingress side (trimming paper, section 4): an
// ingress pipeline cannot see the egress queue, so it keeps, per egress port, meters that emulate
// a virtual output queue draining at the port's line rate and trims a frame the current meter
// colours red before it reaches the traffic manager. Which meter counts depends on the port's
// state, driven by congestion notifications that deflect-on-drop sends to every pipeline:
//
//   notification at t -> pessimistic until t + T0 -> half-pessimistic until t + T1
//                     -> optimistic (a notification in any state restarts at pessimistic)
//
// Both expiries are measured from the notification, as the paper's registers hold them
// (section 4: t0_reg = now + T0, t1_reg = now + T1; its switch.p4 variant compares the time since
// the last notification with T0 and T1). T1 below T0 leaves no half-pessimistic period.
//
// Two variants, as in the paper:
//  - three meters (ndp.p4): single-rate meters at 100 %, 50 % and 25 % of line rate, all executed
//    on every frame; the state's meter decides (red: trim).
//  - two meters (switch.p4): "opti", a two-rate three-colour meter with PIR = line rate and
//    CIR = half of it, and "pesi" at a quarter; pessimistic trims unless pesi is green,
//    half-pessimistic unless opti is green, optimistic when opti is red.
// The 25 % is the pessimistic share, 50 % twice it (IngressMeterSettings::pessimistic_share).
//
// These classes are plain state on an injected clock (tests/model/ingress_meters_test.cpp);
// model/tofino_approx.h keeps one IngressPortState per pipeline and egress port.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sharebuf::model {

enum class PortTrimState : uint8_t { kOptimistic, kHalfPessimistic, kPessimistic };
std::string_view to_string(PortTrimState s) noexcept;  // "optimistic", "half", "pessimistic"

// kFixed: one meter per egress port at its line rate whatever the notifications say, and a frame
// the buffer then refuses deflected: the paper's "Tofino with per-destination meters in the
// ingress pipeline and Deflect-on-Drop", the "DoD" curve of its Figure 5 (section 6.1).
// kMirror: no meters at all; a frame the buffer refuses has its header alone mirrored through the
// pipeline's recirculation port (Mirror-on-Drop, as Trident 4 and Spectrum 2 trim): the "MoD"
// curve of Figure 5, a 100 Gbit/s mirror port per pipeline and 1 us of recirculation latency.
enum class MeterVariant : uint8_t { kThreeMeters, kTwoMeters, kFixed, kMirror };
// "three" (ndp.p4), "two" (switch.p4), "fixed", "mirror"
std::string_view to_string(MeterVariant v) noexcept;
std::optional<MeterVariant> meter_variant(std::string_view name) noexcept;

enum class MeterColor : uint8_t { kGreen, kYellow, kRed };

// One token bucket as a meter executes it: `burst_bytes` deep, filled at `rate_bps`, starting
// full. The rate and depth come with every call, so a live change applies to the next frame.
class TokenMeterBucket {
 public:
  // Refills to `now_ns`; true if `bytes` tokens are there (not taken).
  bool has(uint32_t bytes, uint64_t now_ns, uint64_t rate_bps, uint32_t burst_bytes) noexcept;
  void take(uint32_t bytes) noexcept { tokens_ -= bytes; }

 private:
  double tokens_ = -1;  // < 0: not used yet (full)
  uint64_t last_ns_ = 0;
};

// RFC 2698's two-rate three-colour meter, colour-blind: red when the peak bucket lacks the
// bytes, yellow when only the committed bucket does, green otherwise; a frame takes tokens from
// the buckets it passes. With pir == cir it is a single-rate meter (green or red).
class TwoRateMeter {
 public:
  MeterColor execute(uint32_t bytes, uint64_t now_ns, uint64_t pir_bps, uint64_t cir_bps,
                     uint32_t burst_bytes) noexcept;

 private:
  TokenMeterBucket peak_;
  TokenMeterBucket committed_;
};

struct IngressMeterSettings {
  MeterVariant variant = MeterVariant::kThreeMeters;
  uint64_t line_rate_bps = 0;  // the egress port's rate
  uint32_t burst_bytes = 12'000;
  // Pessimistic meters at this share of the line rate, half-pessimistic at twice it (at most the
  // line rate): the paper's 25 % and 50 % with its four pipelines.
  double pessimistic_share = 0.25;
  uint64_t t0_ns = 6'000;   // pessimistic until this long after a notification
  uint64_t t1_ns = 12'000;  // half-pessimistic until this long after it (section 4: 6 + 6 us)
};

// One egress port as one ingress pipeline sees it: its meters and the t0/t1 registers.
class IngressPortState {
 public:
  struct Decision {
    bool trim = false;
    PortTrimState state = PortTrimState::kOptimistic;
    bool changed = false;  // the state differs from the one the previous frame saw
  };

  // A congestion notification reached this pipeline at `at_ns` (t0_reg, t1_reg of the paper).
  void notify(uint64_t at_ns, const IngressMeterSettings& s) noexcept;
  // The state at `now_ns` (no meter executed).
  PortTrimState state(uint64_t now_ns) const noexcept;
  // A data frame of `bytes` for this port: executes the variant's meters, picks the state's
  // colour; trim when it says so.
  Decision on_frame(uint32_t bytes, uint64_t now_ns, const IngressMeterSettings& s) noexcept;

 private:
  uint64_t t0_reg_ = 0;  // pessimistic while now <= t0_reg_
  uint64_t t1_reg_ = 0;  // half-pessimistic while now <= t1_reg_; 0: optimistic
  PortTrimState last_ = PortTrimState::kOptimistic;
  TwoRateMeter full_;     // three meters: 100 %; two meters: opti (PIR 100 %, CIR 50 %)
  TwoRateMeter half_;     // three meters only: 50 %
  TwoRateMeter quarter_;  // 25 % (pesi)
};

}  // namespace sharebuf::model

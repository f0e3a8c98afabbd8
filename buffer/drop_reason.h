// DropReason: why a frame was not transmitted. One enum for counters, JSON, logs and the control
// socket; the string names are part of sharebuf's interface and never change.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sharebuf::buffer {

enum class DropReason : uint8_t {
  kNone = 0,     // not dropped
  kThreshold,    // the policy's threshold refused it
  kPoolFull,     // its cells did not fit in the shared buffer, whatever the policy said
  kPrediction,   // Credence's oracle predicted LQD would drop it
  kPushedOut,    // admitted, then evicted from its queue by a push-out policy (LQD)
  kUnsupported,  // the policy asked for an action the datapath does not offer in this context
  kMeter,        // trimmed at ingress by a meter (trimming's Tofino approximation): never offered
  kReclaimed,    // admitted, then dropped from its queue's head by a reclaiming policy (Occamy)
  kCount,
};

inline constexpr size_t kNumDropReasons = static_cast<size_t>(DropReason::kCount);

inline constexpr std::array<std::string_view, kNumDropReasons> kDropReasonNames = {
    "none",       "threshold",   "pool_full", "prediction",
    "pushed_out", "unsupported", "meter",     "reclaimed",
};

constexpr std::string_view to_string(DropReason r) noexcept {
  return kDropReasonNames[static_cast<size_t>(r)];
}

// Whether a frame dropped for reason r had been admitted (it left its queue without being sent):
// such drops are not counted among a queue's refusals, and they take frames out of its FIFO.
constexpr bool evicted_after_admission(DropReason r) noexcept {
  return r == DropReason::kPushedOut || r == DropReason::kReclaimed;
}

constexpr std::optional<DropReason> drop_reason_from_string(std::string_view s) noexcept {
  for (size_t i = 0; i < kNumDropReasons; ++i) {
    if (kDropReasonNames[i] == s) return static_cast<DropReason>(i);
  }
  return std::nullopt;
}

}  // namespace sharebuf::buffer

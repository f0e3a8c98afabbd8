// The datapath's two clocks: CLOCK_MONOTONIC for every time it keeps, and CLOCK_REALTIME only to
// read the kernel's RX ring stamps against (hop_latency.h). Inline: read per burst and per frame.
#pragma once

#include <time.h>

#include <cstdint>

namespace sharebuf::datapath {

inline uint64_t read_clock_ns(clockid_t clock) noexcept {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}
inline uint64_t monotonic_ns() noexcept {
  return read_clock_ns(CLOCK_MONOTONIC);
}
inline uint64_t realtime_ns() noexcept {
  return read_clock_ns(CLOCK_REALTIME);
}

}  // namespace sharebuf::datapath

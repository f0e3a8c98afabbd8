// DepartureClock: the time each frame's last bit leaves its port at the configured ("line") rate
// — the clock a hardware port gives its departures. A software egress sends a burst of frames in
// one call, so the wall clock would give every frame of the burst the same time; policies that
// learn from departures (Protean's and Smartbuf's gradients, FB's measured gamma, Credence) and
// the sojourn histograms would then see a clock that jumps per burst. Instead each frame gets
//   F = max(previous F, arrival, floor) + bytes x 8 / rate
// with floor = now, or now - max_lag while the port is backlogged: the shaper keeps credit for
// time a late egress thread lost (model/token_bucket.h), and the frames it then sends at once
// would have left a hardware port during that time, back to back. An unshaped port has no line
// rate to emulate: its frames carry the real time each is sent (the caller's per-frame `now`).
//
// Owned by whoever holds the port's EgressPath; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sharebuf::model {

class DepartureClock {
 public:
  // max_lag_ns: how far behind `now` a backlogged port's clock may resume (the shaper's
  // catch-up depth in time).
  void set_rate(uint64_t rate_bps, uint64_t max_lag_ns) noexcept {
    rate_bps_ = rate_bps;
    max_lag_ns_ = max_lag_ns;
  }
  bool unshaped() const noexcept { return rate_bps_ == 0; }
  uint64_t rate_bps() const noexcept { return rate_bps_; }

  // The departure time of a frame of `bytes` that arrived at `arrival_ns` and is sent at
  // `now_ns`; `backlogged`: frames were still queued when the port last stopped sending.
  uint64_t depart(uint32_t bytes, uint64_t arrival_ns, uint64_t now_ns, bool backlogged) noexcept {
    if (unshaped()) return finish_ = std::max(finish_, now_ns);
    const uint64_t floor = backlogged ? now_ns - std::min(now_ns, max_lag_ns_) : now_ns;
    const uint64_t start = std::max({finish_, arrival_ns, floor});
    finish_ = start + serialisation_ns(bytes);
    return finish_;
  }
  uint64_t serialisation_ns(uint32_t bytes) const noexcept {
    return rate_bps_ == 0 ? 0 : uint64_t{bytes} * 8'000'000'000ull / rate_bps_;
  }
  uint64_t last_finish_ns() const noexcept { return finish_; }

 private:
  uint64_t rate_bps_ = 0;
  uint64_t max_lag_ns_ = 0;
  uint64_t finish_ = 0;
};

}  // namespace sharebuf::model

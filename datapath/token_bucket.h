// TokenBucket: the egress shaper. The port's configured rate is the "line rate" the policies see.
// Tokens are bytes of Ethernet frame (no preamble/FCS, as tc does); the bucket holds at most
// `depth_bytes`, enough to absorb the scheduler's wake-up jitter without bursting much.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sharebuf::datapath {

class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(uint64_t rate_bps, uint64_t depth_bytes) { set_rate(rate_bps, depth_bytes); }

  void set_rate(uint64_t rate_bps, uint64_t depth_bytes) noexcept {
    rate_bps_ = rate_bps;
    depth_ = static_cast<double>(depth_bytes);
    tokens_ = depth_;
  }
  bool unshaped() const noexcept { return rate_bps_ == 0; }
  uint64_t rate_bps() const noexcept { return rate_bps_; }

  // Nanoseconds until `bytes` may be sent (0: now).
  uint64_t wait_ns(uint32_t bytes, uint64_t now_ns) noexcept {
    if (unshaped()) return 0;
    refill(now_ns);
    if (tokens_ >= bytes) return 0;
    return static_cast<uint64_t>((bytes - tokens_) * 8e9 / static_cast<double>(rate_bps_)) + 1;
  }
  void consume(uint32_t bytes) noexcept {
    if (!unshaped()) tokens_ -= bytes;
  }

 private:
  void refill(uint64_t now_ns) noexcept {
    if (now_ns > last_ns_) {
      tokens_ = std::min(depth_, tokens_ + static_cast<double>(now_ns - last_ns_) *
                                               static_cast<double>(rate_bps_) / 8e9);
      last_ns_ = now_ns;
    }
  }

  uint64_t rate_bps_ = 0;
  double depth_ = 0;
  double tokens_ = 0;
  uint64_t last_ns_ = 0;
};

}  // namespace sharebuf::datapath

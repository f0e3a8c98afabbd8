// TokenBucket: the egress shaper. The port's configured rate is the "line rate" the policies see.
// Tokens are bytes of Ethernet frame (no preamble/FCS, as tc does). While the port is idle the
// bucket holds at most `depth_bytes`, so an idle port bursts little. While it is backlogged the
// bucket may hold up to `catchup_bytes`: a hardware port would have been sending all along, so
// time the egress thread lost to a late wake-up (a loaded host runs it milliseconds late) is owed
// to the queue and sent at once, instead of being forfeited and making the port slower than its
// configured rate.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sharebuf::model {

class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(uint64_t rate_bps, uint64_t depth_bytes, uint64_t catchup_bytes = 0) {
    set_rate(rate_bps, depth_bytes, catchup_bytes);
  }

  // catchup_bytes below depth_bytes means no catch-up: a plain token bucket.
  void set_rate(uint64_t rate_bps, uint64_t depth_bytes, uint64_t catchup_bytes = 0) noexcept {
    rate_bps_ = rate_bps;
    depth_ = static_cast<double>(depth_bytes);
    catchup_ = std::max(depth_, static_cast<double>(catchup_bytes));
    tokens_ = depth_;
    backlogged_ = false;
  }
  bool unshaped() const noexcept { return rate_bps_ == 0; }
  uint64_t rate_bps() const noexcept { return rate_bps_; }

  // Whether frames were still queued when the sender stopped: the time until the next wait_ns()
  // is then time the port owed to them.
  void set_backlogged(bool backlogged) noexcept { backlogged_ = backlogged; }
  bool backlogged() const noexcept { return backlogged_; }
  // How long the catch-up depth lasts at the rate (0 when unshaped).
  uint64_t catchup_ns() const noexcept {
    return unshaped() ? 0 : static_cast<uint64_t>(catchup_ * 8e9 / static_cast<double>(rate_bps_));
  }

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

  // Credit kept above the idle depth because the port was backlogged (what a plain token bucket
  // would have lost), since the last call.
  uint64_t take_caught_up_bytes() noexcept {
    const uint64_t n = static_cast<uint64_t>(caught_up_);
    caught_up_ -= static_cast<double>(n);
    return n;
  }

 private:
  void refill(uint64_t now_ns) noexcept {
    if (now_ns <= last_ns_) return;
    const double earned =
        static_cast<double>(now_ns - last_ns_) * static_cast<double>(rate_bps_) / 8e9;
    last_ns_ = now_ns;
    const double uncapped = tokens_ + earned;
    const double capped = std::min(backlogged_ ? catchup_ : depth_, uncapped);
    if (capped > depth_) caught_up_ += capped - std::max(depth_, tokens_);
    tokens_ = capped;
  }

  uint64_t rate_bps_ = 0;
  double depth_ = 0;
  double catchup_ = 0;
  double tokens_ = 0;
  double caught_up_ = 0;
  uint64_t last_ns_ = 0;
  bool backlogged_ = false;
};

}  // namespace sharebuf::model

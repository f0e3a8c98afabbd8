// StormControl: a per-port policer on broadcast and multicast ingress, as switch ASICs have
// ("storm control"): beyond a configured rate in frames per second, such frames are dropped before
// they are flooded, so a broadcast storm cannot take every port's share of the shared buffer and
// starve unicast traffic. Bursts of up to 50 ms at the rate (at least 8 frames) pass, so ARP and
// neighbour discovery on a quiet link are never hit.
// Thread-safety: used only by the RX worker of its port.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/token_bucket.h"

namespace sharebuf::datapath {

class StormControl {
 public:
  void set_rate(uint64_t frames_per_second) noexcept {
    // One token per frame: a rate of 8 x pps "bits" per second earns pps one-byte tokens.
    bucket_.set_rate(frames_per_second * 8, std::max<uint64_t>(8, frames_per_second / 20));
  }
  bool enabled() const noexcept { return !bucket_.unshaped(); }
  // Whether a broadcast or multicast frame arriving now may pass.
  bool allow(uint64_t now_ns) noexcept {
    if (bucket_.wait_ns(1, now_ns) != 0) return false;
    bucket_.consume(1);
    return true;
  }

 private:
  model::TokenBucket bucket_;
};

}  // namespace sharebuf::datapath

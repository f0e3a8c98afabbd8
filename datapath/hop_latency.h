// HopLatency: where a frame's time goes inside the switch, per port, as DelayHistograms (ns), so
// the idle path can be taken apart hop by hop (README "Where a frame's time goes"):
//   wakeup        the kernel's RX ring timestamp → the RX worker running, for the first frame
//                 after the worker blocked in poll(): the wake-up latency alone;
//   ring_to_rx    ring timestamp → the RX worker takes the frame, for every frame (wake-ups, and
//                 frames waiting behind others in the ring);
//   rx_to_queued  the RX worker takes the frame → its copy is in its queue (parse, forwarding,
//                 admission, the copy into cells); per copy enqueued;
//   rx_to_sent    the RX worker takes the frame → sendmmsg handed it to the kernel on the egress
//                 port (queueing, the egress worker's wake-up or the inline send, the shaper).
// wakeup, ring_to_rx and rx_to_queued are kept at the ingress port, rx_to_sent at the egress port.
// The ring timestamp is the kernel's CLOCK_REALTIME stamp of the frame (tpacket2_hdr tp_sec and
// tp_nsec), compared with CLOCK_REALTIME read once per RX burst; stamps from the future or over a
// minute old (the clock was stepped) are left out.
//
// Thread-safety: written by the datapath threads (relaxed increments), read anywhere; reset() may
// race with writers and then loses a few counts, which a diagnostic histogram can afford.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "buffer/delay_histogram.h"

namespace sharebuf::datapath {

struct HopLatency {
  enum Hop : int { kWakeup, kRingToRx, kRxToQueued, kRxToSent, kNumHops };
  static constexpr std::array<std::string_view, kNumHops> kNames = {"wakeup", "ring_to_rx",
                                                                    "rx_to_queued", "rx_to_sent"};
  // A ring stamp further back than this is not a frame's wait but a clock step.
  static constexpr uint64_t kMaxPlausibleNs = 60'000'000'000ull;

  buffer::DelayHistogram hops[kNumHops];

  void record(Hop hop, uint64_t ns) noexcept { hops[hop].record(ns); }
  // From the ring's realtime stamp to `realtime_now_ns`; false (nothing recorded) if implausible.
  bool record_since_ring(Hop hop, uint64_t ring_realtime_ns, uint64_t realtime_now_ns) noexcept {
    if (ring_realtime_ns == 0 || ring_realtime_ns > realtime_now_ns ||
        realtime_now_ns - ring_realtime_ns > kMaxPlausibleNs)
      return false;
    hops[hop].record(realtime_now_ns - ring_realtime_ns);
    return true;
  }
  void reset() noexcept {
    for (auto& h : hops)
      h.reset();
  }
};

}  // namespace sharebuf::datapath

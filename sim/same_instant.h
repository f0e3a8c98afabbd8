// The order of the events of one instant, defined once for both engines that simulate a switch,
// the replay (sim/replay.cpp) and the ns-3 queue disc (sim/ns3/sharebuf_queue_disc.cc), so that
// the same arrivals meet the same buffer in both:
//   1. the instant's arrivals, in the order they came (ns-3's event order; a recording keeps
//      it, and the replay sorts by time stably);
//   2. then the ports whose transmission starts at that instant, lowest port first: each frees
//      its frame's cells and the policy hears of the departure.
// That is the replay's --order arrivals-first; its default, departures first, is the other way
// round (ns-3 has only this one). Header-only and C++17, for ns-3's side.
#pragma once

#include <cstdint>

namespace sharebuf::sim {

inline constexpr uint64_t kNoDeparture = UINT64_MAX;

// The port whose next transmission starts first, the lowest among equals; `due_at(p)` is port
// p's start time or kNoDeparture. Returns that time (kNoDeparture: no port is due) and sets
// `port`.
template <class DueAt>
uint64_t next_departure(uint32_t ports, DueAt&& due_at, uint32_t& port) {
  uint64_t best = kNoDeparture;
  for (uint32_t p = 0; p < ports; ++p) {
    const uint64_t t = due_at(p);
    if (t < best) {
      best = t;
      port = p;
    }
  }
  return best;
}

}  // namespace sharebuf::sim

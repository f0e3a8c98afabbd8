// ProbeCharge: what a port's probes take from its rate, as on Tofino. dt.p4's and protean.p4's
// probes (one per queue every probe interval) wait in the queue they measure and the port's
// shaper charges them when they leave it, though egress drops them before the wire (p4/README.md:
// 39 bytes each in the traffic manager). The software's probes are snapshots that cost nothing;
// with `[buffer] probe_bytes` set, each port owes probe_bytes x its queues per probe interval
// boundary passed while it was sending, and its next frame waits for them.
//
// Only boundaries passed while the port was backlogged are charged: a probe that crosses an idle
// port delays nothing. After a long backlogged stretch without a send (a late egress thread) at
// most `max_intervals` are owed at once, as the shaper's catch-up depth bounds what it owes.
//
// Owned by whoever holds the port's egress; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sharebuf::model {

class ProbeCharge {
 public:
  // Bytes owed at `now_ns`: per_interval_bytes for each interval boundary passed since the last
  // call, if the port was backlogged since then; 0 otherwise (and always when per_interval_bytes
  // or interval_ns is 0).
  uint64_t owed_bytes(uint64_t now_ns, uint64_t interval_ns, uint64_t per_interval_bytes,
                      bool backlogged, uint64_t max_intervals) noexcept {
    if (interval_ns == 0 || per_interval_bytes == 0) return 0;
    const uint64_t boundary = now_ns / interval_ns;
    const uint64_t passed = boundary > last_boundary_ ? boundary - last_boundary_ : 0;
    last_boundary_ = std::max(last_boundary_, boundary);
    if (!backlogged) return 0;
    return std::min(passed, max_intervals) * per_interval_bytes;
  }

 private:
  uint64_t last_boundary_ = 0;
};

}  // namespace sharebuf::model

// PortCounters: what happened to frames at one port, besides the per-queue counters of the shared
// buffer. Every frame the RX ring hands over is counted once in rx_frames and then either
// forwarded (one admission per copy), or dropped for exactly one of: malformed (per reason),
// truncated, filtered, storm_dropped; copies may also be refused per out port as oversize.
// Thread-safety: RX-side fields are written by the port's RX worker, TX-side fields by its egress
// worker, `oversize` by any RX worker (atomic); readers anywhere (relaxed).
#pragma once

#include <atomic>
#include <cstdint>

#include "model/frame_parser.h"

namespace sharebuf::datapath {

struct alignas(64) PortCounters {
  // RX side (this port's RX worker).
  std::atomic<uint64_t> rx_frames{0};
  std::atomic<uint64_t> rx_bytes{0};
  std::atomic<uint64_t> ring_drops{0};  // dropped by the kernel: RX ring full
  // Frames the kernel handed the port's socket(s) (PACKET_STATISTICS' tp_packets, or the AF_XDP
  // socket's frames and drops): rx_frames + ring_drops + what waits in the ring.
  std::atomic<uint64_t> socket_frames{0};
  std::atomic<uint64_t> truncated{0};           // larger than a ring slot (offloads on?)
  std::atomic<uint64_t> filtered{0};            // destination learned on the ingress port
  std::atomic<uint64_t> storm_dropped{0};       // broadcast/multicast over the storm_pps rate
  std::atomic<uint64_t> flooded{0};             // frames flooded (unknown or group destination)
  std::atomic<uint64_t> checksum_completed{0};  // partial L4 checksums completed in software
  std::atomic<uint64_t> malformed[model::kNumParseErrors] = {};
  // Per-CPU RX only: frames taken after a frame of this port the kernel stamped later (read from
  // another CPU's lane first), across all flows of the port and by the kernel's receive stamps: a
  // sign of reordering, not a count of what one flow saw (the receiver's TCP counters are).
  std::atomic<uint64_t> rx_out_of_order{0};
  // Copies refused at this port as egress: larger than its MTU (any RX worker).
  std::atomic<uint64_t> oversize{0};
  // TX side (this port's egress worker).
  std::atomic<uint64_t> tx_frames{0};
  std::atomic<uint64_t> tx_bytes{0};
  std::atomic<uint64_t> tx_errors{0};
  // A shared AF_XDP UMEM ([switch] af_xdp_umem): frames received here that were queued in the
  // chunk they arrived in instead of copied into cells (this port's RX worker), and frames sent
  // here from such a chunk without a copy (its egress worker).
  std::atomic<uint64_t> rx_kept_in_chunk{0};
  std::atomic<uint64_t> tx_from_chunk{0};
  // Shaper credit the port kept because its egress thread ran late while frames were queued
  // (see token_bucket.h): non-zero means the host was slow to schedule the switch.
  std::atomic<uint64_t> shaper_catchup_bytes{0};
  // Bytes of the port's rate given to probes ([buffer] probe_bytes, model/probe_charge.h).
  std::atomic<uint64_t> probe_charged_bytes{0};

  uint64_t malformed_total() const noexcept {
    uint64_t n = 0;
    for (size_t i = 1; i < model::kNumParseErrors; ++i)
      n += malformed[i].load(std::memory_order_relaxed);
    return n;
  }
};

}  // namespace sharebuf::datapath

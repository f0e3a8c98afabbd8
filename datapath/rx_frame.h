// RxFrame: one received frame as a port's receive ring hands it to an RX worker (a TPACKET slot,
// datapath/af_packet_port.h, or an AF_XDP buffer, datapath/xsk_port.h). The data stays valid until
// the worker releases it.
#pragma once

#include <cstdint>

namespace sharebuf::datapath {

struct RxFrame {
  const uint8_t* data = nullptr;
  uint32_t len = 0;       // bytes captured
  uint32_t wire_len = 0;  // bytes on the wire (> len: the ring slot truncated it)
  uint16_t vlan_tci = 0;
  uint16_t vlan_tpid = 0;
  bool vlan_valid = false;        // the kernel stripped a VLAN tag into vlan_tci
  bool checksum_partial = false;  // TP_STATUS_CSUMNOTREADY: L4 checksum not computed yet
  uint64_t ring_realtime_ns =
      0;  // the kernel's stamp (CLOCK_REALTIME) as it filled the slot; 0 if none
  // Set by the RX worker when the frame stays queued in its AF_XDP chunk (a shared UMEM,
  // datapath/xsk_umem.h): the chunk the receive side gets back instead (its offset).
  bool kept = false;
  uint64_t refill = 0;
};

// When the frame reached the ring, on the monotonic clock: `now_ns` (monotonic) less how long
// ago its ring stamp was (`realtime_now_ns`, the stamp's clock, read with it); `now_ns` itself
// when the frame has no plausible stamp (none, from the future, or over a second old). The
// ingress meters of trimming's Tofino approximation time each frame by it, so the up to 64
// frames of one RX batch keep their spacing instead of looking like one burst.
inline uint64_t ring_arrival_ns(const RxFrame& rx, uint64_t now_ns,
                                uint64_t realtime_now_ns) noexcept {
  if (rx.ring_realtime_ns == 0 || rx.ring_realtime_ns > realtime_now_ns) return now_ns;
  const uint64_t ago = realtime_now_ns - rx.ring_realtime_ns;
  return ago < 1'000'000'000 && ago <= now_ns ? now_ns - ago : now_ns;
}

}  // namespace sharebuf::datapath

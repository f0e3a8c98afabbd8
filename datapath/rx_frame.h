// RxFrame: one received frame as a port's receive ring hands it to an RX worker (a TPACKET slot,
// datapath/af_packet_port.h, or an AF_XDP buffer, datapath/xsk_rx.h). The data stays valid until
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
};

}  // namespace sharebuf::datapath

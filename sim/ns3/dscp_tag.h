// DscpTag: the DSCP of a flow's payload bytes, carried as an ns-3 packet tag (C++17, ns-3).
//
// Why not the IP header's DSCP: SetIpTos before Connect is undone (Connect takes the TOS of the
// address it is given), and with the TOS set through that address, or on the socket once
// connected, ns-3.37's DCTCP sends its data Not-ECT (observed at the switch: no packet
// ECN-capable, no marks; tests/sim/ns3_classes.sh), so a DCTCP flow with a DSCP would never be
// marked. A packet tag on the payload follows every segment the TCP stack cuts from it,
// retransmissions included, and leaves ECN to DCTCP. Segments without payload (SYN, FIN, pure
// ACKs) carry none: the switch sees DSCP 0 for them.
// Why a packet tag and not a byte tag: ns-3's byte tags made leaf-spine runs slower and larger
// the longer they simulated (credence.toml at load 0.8: 50 ms in 35 s and 1.4 GB against 12 s
// and 83 MB; 0.3 s in 1158 s against 116 s), with byte-identical results.
#pragma once

#include <cstdint>
#include <ostream>

#include "ns3/packet.h"
#include "ns3/tag.h"

namespace sharebuf::sim {

class DscpTag : public ns3::Tag {
 public:
  DscpTag() = default;
  explicit DscpTag(uint8_t dscp) : dscp_(dscp) {}

  static ns3::TypeId GetTypeId();
  ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 1; }
  void Serialize(ns3::TagBuffer i) const override { i.WriteU8(dscp_); }
  void Deserialize(ns3::TagBuffer i) override { dscp_ = i.ReadU8(); }
  void Print(std::ostream& os) const override { os << "dscp=" << unsigned{dscp_}; }

  uint8_t dscp() const { return dscp_; }

  // The DSCP a packet's payload was sent with: its IP header's if set, else its DscpTag's
  // (0 without either).
  static uint8_t Of(uint8_t header_dscp, const ns3::Packet& p);

 private:
  uint8_t dscp_ = 0;
};

}  // namespace sharebuf::sim

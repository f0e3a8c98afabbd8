// SenderTag: what a sender says about its flow's payload, carried as an ns-3 packet tag (C++17,
// ns-3): the DSCP it was sent with, and whether it belongs to the flow's first bandwidth-delay
// product of bytes (ABM's first round trip: the ABM and Credence authors' simulations have the
// sender tag those bytes and the switch read the tag; a switch that waits for the flow's data
// from its SYN on cannot tell them by time).
//
// Why not the IP header's DSCP: SetIpTos before Connect is undone (Connect takes the TOS of the
// address it is given), and with the TOS set through that address, or on the socket once
// connected, ns-3.37's DCTCP sends its data Not-ECT (observed at the switch: no packet
// ECN-capable, no marks; tests/sim/ns3_classes.sh), so a DCTCP flow with a DSCP would never be
// marked. A packet tag on the payload follows every segment the TCP stack cuts from it,
// retransmissions included, and leaves ECN to DCTCP (a segment joining two writes keeps the
// first one's tag: ns-3's Packet::AddAtEnd copies no packet tags). Segments without payload
// (SYN, FIN, pure ACKs) carry none: the switch sees DSCP 0 for them and no first-BDP answer.
// Why a packet tag and not a byte tag: ns-3's byte tags made leaf-spine runs slower and larger
// the longer they simulated (credence.toml at load 0.8: 50 ms in 35 s and 1.4 GB against 12 s
// and 83 MB; 0.3 s in 1158 s against 116 s), with byte-identical results.
//
// The tag also names the sender's flow (sharebuf-sim's flow id), so that the receiving host knows
// a connection's flow from its packets rather than from a table the sender writes: in a run split
// across MPI ranks the two ends may live in different processes (a packet's tags cross with it).
#pragma once

#include <cstdint>
#include <ostream>

#include "ns3/packet.h"
#include "ns3/tag.h"

namespace sharebuf::sim {

class SenderTag : public ns3::Tag {
 public:
  SenderTag() = default;
  static constexpr uint32_t kNoFlow = UINT32_MAX;
  SenderTag(uint8_t dscp, bool first_bdp, uint32_t flow = kNoFlow)
      : dscp_(dscp), first_bdp_(first_bdp), flow_(flow) {}

  static ns3::TypeId GetTypeId();
  ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 6; }
  void Serialize(ns3::TagBuffer i) const override {
    i.WriteU8(dscp_);
    i.WriteU8(first_bdp_ ? 1 : 0);
    i.WriteU32(flow_);
  }
  void Deserialize(ns3::TagBuffer i) override {
    dscp_ = i.ReadU8();
    first_bdp_ = i.ReadU8() != 0;
    flow_ = i.ReadU32();
  }
  void Print(std::ostream& os) const override {
    os << "dscp=" << unsigned{dscp_} << " first_bdp=" << first_bdp_ << " flow=" << flow_;
  }

  uint8_t dscp() const { return dscp_; }
  bool first_bdp() const { return first_bdp_; }
  uint32_t flow() const { return flow_; }

 private:
  uint8_t dscp_ = 0;
  bool first_bdp_ = false;
  uint32_t flow_ = kNoFlow;
};

// What the switch reads of a packet: its DSCP (the IP header's if set, else its SenderTag's, 0
// without either) and, when it carries a SenderTag, whether it is in its flow's first BDP.
struct SenderView {
  uint8_t dscp = 0;
  bool tagged = false;
  bool first_bdp = false;
  static SenderView Of(uint8_t header_dscp, const ns3::Packet& p);
};

// The bytes a sender tags as its flow's first bandwidth-delay product as it writes them.
class FirstBdpCounter {
 public:
  explicit FirstBdpCounter(uint64_t bdp_bytes) : left_(bdp_bytes) {}
  // How much of a write of `n` bytes to send next (the first BDP's end cuts a write in two) and
  // whether it is in the first BDP; Sent() counts what the socket took.
  uint64_t Next(uint64_t n) const { return left_ == 0 ? n : (n < left_ ? n : left_); }
  bool InFirstBdp() const { return left_ != 0; }
  void Sent(uint64_t n) { left_ -= n < left_ ? n : left_; }

 private:
  uint64_t left_;
};

}  // namespace sharebuf::sim

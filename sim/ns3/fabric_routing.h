// FabricRouting: the forwarding of sharebuf-sim's nodes (C++17, ns-3). Every host address maps
// to the interfaces that lead toward it; where there are several (a leaf's uplinks), a flow's
// 5-tuple hash picks one, so a flow keeps its path and its packets stay in order (per-flow ECMP,
// what datacenter fabrics do; ns-3.37's global routing only sprays packets at random). A host
// has no table: everything leaves through its one link. A switch's arrivals are handed to its
// SharebufSwitch to be admitted at the end of their instant in ingress-port order
// (SharebufSwitch::DeferArrival).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"
#include "sim/ns3/sharebuf_queue_disc.h"

namespace sharebuf::sim {

class FabricRouting : public ns3::Ipv4RoutingProtocol {
 public:
  static ns3::TypeId GetTypeId();

  // Packets to `host` leave through one of `interfaces` (ns-3 interface indices of this node).
  void AddRoute(ns3::Ipv4Address host, std::vector<uint32_t> interfaces);
  // Salts the hash, so that switches in a row do not pick the same index for a flow.
  void SetSalt(uint32_t salt) { salt_ = salt; }

  ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& header,
                                       ns3::Ptr<ns3::NetDevice> oif,
                                       ns3::Socket::SocketErrno& sockerr) override;
  bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header,
                  ns3::Ptr<const ns3::NetDevice> idev, UnicastForwardCallback ucb,
                  MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                  ErrorCallback ecb) override;
  void NotifyInterfaceUp(uint32_t) override {}
  void NotifyInterfaceDown(uint32_t) override {}
  void NotifyAddAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { ipv4_ = ipv4; }
  void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper> stream,
                         ns3::Time::Unit unit) const override;

 private:
  // The interface for a packet to `dst` (its L4 ports read from `l4`, which may be null).
  int32_t Pick(const ns3::Ipv4Header& header, ns3::Ptr<const ns3::Packet> l4) const;
  ns3::Ptr<ns3::Ipv4Route> Route(const ns3::Ipv4Header& header, uint32_t interface) const;

  ns3::Ptr<ns3::Ipv4> ipv4_;
  ns3::Ptr<SharebufSwitch> switch_;  // the node's switch (null for a host): arrivals wait for it
  bool switch_looked_up_ = false;
  std::unordered_map<uint32_t, std::vector<uint32_t>> routes_;  // by host address
  uint32_t salt_ = 0;
};

class FabricRoutingHelper : public ns3::Ipv4RoutingHelper {
 public:
  FabricRoutingHelper* Copy() const override { return new FabricRoutingHelper(*this); }
  ns3::Ptr<ns3::Ipv4RoutingProtocol> Create(ns3::Ptr<ns3::Node> node) const override;
};

}  // namespace sharebuf::sim

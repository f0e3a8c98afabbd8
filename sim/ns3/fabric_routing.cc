#include "sim/ns3/fabric_routing.h"

#include <ostream>

#include "ns3/ipv4-route.h"
#include "ns3/node.h"
#include "ns3/output-stream-wrapper.h"
#include "ns3/packet.h"

namespace sharebuf::sim {

NS_OBJECT_ENSURE_REGISTERED(FabricRouting);

ns3::TypeId FabricRouting::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("sharebuf::FabricRouting")
                               .SetParent<ns3::Ipv4RoutingProtocol>()
                               .SetGroupName("Internet")
                               .AddConstructor<FabricRouting>();
  return tid;
}

void FabricRouting::AddRoute(ns3::Ipv4Address host, std::vector<uint32_t> interfaces) {
  routes_[host.Get()] = std::move(interfaces);
}

int32_t FabricRouting::Pick(const ns3::Ipv4Header& header, ns3::Ptr<const ns3::Packet> l4) const {
  if (routes_.empty()) return 1;  // a host: its one link
  const auto it = routes_.find(header.GetDestination().Get());
  if (it == routes_.end() || it->second.empty()) return -1;
  const std::vector<uint32_t>& out = it->second;
  if (out.size() == 1) return static_cast<int32_t>(out[0]);
  // Per-flow ECMP: a hash of addresses, protocol, the L4 ports (the first four bytes after the
  // IP header, for TCP and UDP alike) and this switch's salt.
  uint32_t ports = 0;
  if (l4 != nullptr && l4->GetSize() >= 4) {
    uint8_t b[4];
    l4->CopyData(b, 4);
    ports = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  }
  uint64_t h = 0x9e3779b97f4a7c15ull ^ salt_;
  for (uint64_t v : {uint64_t{header.GetSource().Get()}, uint64_t{header.GetDestination().Get()},
                     uint64_t{header.GetProtocol()}, uint64_t{ports}}) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return static_cast<int32_t>(out[h % out.size()]);
}

ns3::Ptr<ns3::Ipv4Route> FabricRouting::Route(const ns3::Ipv4Header& header,
                                              uint32_t interface) const {
  ns3::Ptr<ns3::Ipv4Route> r = ns3::Create<ns3::Ipv4Route>();
  r->SetDestination(header.GetDestination());
  // Point-to-point links need no next-hop address: 0.0.0.0 sends to the destination directly.
  r->SetGateway(ns3::Ipv4Address("0.0.0.0"));
  r->SetSource(ipv4_->GetAddress(interface, 0).GetLocal());
  r->SetOutputDevice(ipv4_->GetNetDevice(interface));
  return r;
}

ns3::Ptr<ns3::Ipv4Route> FabricRouting::RouteOutput(ns3::Ptr<ns3::Packet> p,
                                                    const ns3::Ipv4Header& header,
                                                    ns3::Ptr<ns3::NetDevice>,
                                                    ns3::Socket::SocketErrno& sockerr) {
  const int32_t i = Pick(header, p);
  if (i < 0) {
    sockerr = ns3::Socket::ERROR_NOROUTETOHOST;
    return nullptr;
  }
  sockerr = ns3::Socket::ERROR_NOTERROR;
  return Route(header, static_cast<uint32_t>(i));
}

bool FabricRouting::RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header,
                               ns3::Ptr<const ns3::NetDevice> idev, UnicastForwardCallback ucb,
                               MulticastForwardCallback, LocalDeliverCallback lcb,
                               ErrorCallback ecb) {
  const uint32_t iif = static_cast<uint32_t>(ipv4_->GetInterfaceForDevice(idev));
  if (ipv4_->IsDestinationAddress(header.GetDestination(), iif)) {
    if (lcb.IsNull()) return false;
    lcb(p, header, iif);
    return true;
  }
  const int32_t i = Pick(header, p);
  if (i < 0) {
    ecb(p, header, ns3::Socket::ERROR_NOROUTETOHOST);
    return false;
  }
  ns3::Ptr<ns3::Ipv4Route> route = Route(header, static_cast<uint32_t>(i));
  if (!switch_looked_up_) {
    switch_ = ipv4_->GetObject<SharebufSwitch>();
    switch_looked_up_ = true;
  }
  if (switch_ == nullptr) {
    ucb(route, p, header);
    return true;
  }
  // A switch admits the arrivals of one instant in ingress-port order (sharebuf_queue_disc.h:
  // what makes a run split across MPI ranks give the same answer as one process).
  switch_->DeferArrival(
      iif, [ucb, route, p, header]() { ucb(route, p, header); }, ns3::PeekPointer(idev));
  return true;
}

void FabricRouting::PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper> stream,
                                      ns3::Time::Unit) const {
  std::ostream& out = *stream->GetStream();
  out << "FabricRouting: " << routes_.size() << " host routes (per-flow ECMP, salt " << salt_
      << ")\n";
  for (const auto& [addr, ifs] : routes_) {
    out << ns3::Ipv4Address(addr) << " ->";
    for (uint32_t i : ifs)
      out << ' ' << i;
    out << '\n';
  }
}

ns3::Ptr<ns3::Ipv4RoutingProtocol> FabricRoutingHelper::Create(ns3::Ptr<ns3::Node>) const {
  return ns3::CreateObject<FabricRouting>();
}

}  // namespace sharebuf::sim

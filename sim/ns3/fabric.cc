#include "sim/ns3/fabric.h"

#include <stdexcept>

#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "sim/ns3/fabric_routing.h"

namespace sharebuf::sim {

using ns3::Ptr;

Fabric::Fabric(const Scenario& s, const FabricPartition& partition) : s_(s), partition_(partition) {
  // A node's system id is its rank: ns-3 gives a link between two ranks a remote channel.
  for (uint32_t h = 0; h < s.hosts; ++h)
    hosts_.Add(ns3::CreateObject<ns3::Node>(partition_.host_owner(h)));
  for (uint32_t i = 0; i < s.switches.size(); ++i) {
    const ScenarioSwitch& spec = s.switches[i];
    FabricSwitch sw{spec.name, spec.role, ns3::CreateObject<ns3::Node>(partition_.switch_owner(i)),
                    nullptr};
    if (partition_.owns_switch(i)) {
      sw.sw = SharebufSwitch::Install(
          sw.node, SwitchFacade::from_toml(spec.config_toml, s.source + " (" + spec.name + ")"));
    }
    switches_.push_back(std::move(sw));
  }
  ns3::InternetStackHelper stack;
  stack.SetRoutingHelper(FabricRoutingHelper());
  stack.Install(hosts_);
  for (FabricSwitch& sw : switches_)
    stack.Install(sw.node);

  ns3::PointToPointHelper host_link, fabric_link;
  host_link.SetDeviceAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(s.host_rate_bps)));
  host_link.SetChannelAttribute("Delay", ns3::TimeValue(ns3::NanoSeconds(s.delay_ns)));
  fabric_link.SetDeviceAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(s.fabric_rate_bps)));
  fabric_link.SetChannelAttribute("Delay", ns3::TimeValue(ns3::NanoSeconds(s.delay_ns)));
  ns3::Ipv4AddressHelper addresses("198.18.0.0", "255.255.255.252");

  // port_if[switch][port]: the switch's ns-3 interface index of that port.
  std::vector<std::vector<uint32_t>> port_if(switches_.size());
  for (size_t i = 0; i < switches_.size(); ++i) {
    // A star's switch: a port per host; a leaf: its hosts, then an uplink per spine; a spine: a
    // port per leaf.
    port_if[i].resize(!s.leaf_spine  ? s.hosts
                      : i < s.leaves ? s.hosts_per_leaf + s.spines
                                     : s.leaves);
  }

  // One end of a link: a switch port (its queue disc on the shared buffer) or a host's NIC (a
  // FIFO deep enough never to drop: a host's own queue is not the subject here). Another rank's
  // node sends nothing here and needs neither.
  auto install_end = [&](Ptr<ns3::NetDevice> dev, int sw, uint32_t port) {
    if (dev->GetNode()->GetSystemId() != partition_.rank()) return;
    ns3::TrafficControlHelper tch;
    if (sw < 0) {
      tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns3::StringValue("100000p"));
      tch.Install(dev);
      return;
    }
    // The senders tag their flows' first BDP (traffic.h): an untagged packet is not in it.
    tch.SetRootQueueDisc("sharebuf::SharebufQueueDisc", "Port",
                         ns3::IntegerValue(static_cast<int32_t>(port)), "FirstBdpFromTags",
                         ns3::BooleanValue(true));
    tch.Install(dev);
  };
  // Connects a (host or switch port) to b (a switch port).
  auto connect = [&](ns3::PointToPointHelper& link, Ptr<ns3::Node> a, int sw_a, uint32_t port_a,
                     int sw_b, uint32_t port_b) {
    ns3::NetDeviceContainer devs = link.Install(a, switches_[sw_b].node);
    install_end(devs.Get(0), sw_a, port_a);
    install_end(devs.Get(1), sw_b, port_b);
    ns3::Ipv4InterfaceContainer ifs = addresses.Assign(devs);
    addresses.NewNetwork();
    if (sw_a >= 0) port_if[sw_a][port_a] = ifs.Get(0).second;
    port_if[sw_b][port_b] = ifs.Get(1).second;
    return ifs.GetAddress(0);
  };

  const uint32_t per_leaf = s.leaf_spine ? s.hosts_per_leaf : s.hosts;
  for (uint32_t h = 0; h < s.hosts; ++h)
    host_ip_.push_back(
        connect(host_link, hosts_.Get(h), -1, 0, static_cast<int>(h / per_leaf), h % per_leaf));
  if (s.leaf_spine) {
    addresses.SetBase("198.19.0.0", "255.255.255.252");
    for (uint32_t l = 0; l < s.leaves; ++l) {
      for (uint32_t p = 0; p < s.spines; ++p) {
        connect(fabric_link, switches_[l].node, static_cast<int>(l), per_leaf + p,
                static_cast<int>(s.leaves + p), l);
      }
    }
  }

  // Routes: a host under this switch through its port; from a leaf to another leaf's host over
  // every uplink (per-flow ECMP); from a spine through the port to the host's leaf.
  for (size_t i = 0; i < switches_.size(); ++i) {
    if (!switches_[i].local()) continue;
    Ptr<FabricRouting> routing = ns3::DynamicCast<FabricRouting>(
        switches_[i].node->GetObject<ns3::Ipv4>()->GetRoutingProtocol());
    // ecmp_seed: the same flows placed on other paths (the placement's share of a result).
    routing->SetSalt(static_cast<uint32_t>(i) * 0x9e3779b1u + s.ecmp_seed * 0x85ebca6bu);
    for (uint32_t h = 0; h < s.hosts; ++h) {
      std::vector<uint32_t> out;
      if (!s.leaf_spine) {
        out.push_back(port_if[i][h]);
      } else if (i < s.leaves) {
        if (leaf_of(h) == i) {
          out.push_back(port_if[i][h % per_leaf]);
        } else {
          for (uint32_t p = 0; p < s.spines; ++p)
            out.push_back(port_if[i][per_leaf + p]);
        }
      } else {
        out.push_back(port_if[i][leaf_of(h)]);
      }
      routing->AddRoute(host_ip_[h], std::move(out));
    }
  }
}

uint32_t Fabric::leaf_of(uint32_t h) const {
  return s_.leaf_spine ? h / s_.hosts_per_leaf : 0;
}

int64_t Fabric::base_rtt_ns(uint32_t a, uint32_t b) const {
  const int64_t links = (s_.leaf_spine && leaf_of(a) != leaf_of(b)) ? 4 : 2;
  return 2 * links * static_cast<int64_t>(s_.delay_ns);
}

}  // namespace sharebuf::sim

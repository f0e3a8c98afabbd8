// Fabric: the ns-3 network of a scenario (C++17). Hosts first (node i is host i), then the
// switches in the scenario's order; every link point-to-point at its rate and delay. Each switch
// is an ns-3 node whose ports are sharebuf queue discs on one SwitchFacade (its SharedBuffer,
// admission step, policy, schedulers, ECN marking: sim/ns3/sharebuf_queue_disc.h); hosts send
// through a plain FIFO queue disc. Forwarding is per-flow ECMP (sim/ns3/fabric_routing.h).
// Split across MPI ranks (sim/ns3/fabric_partition.h), every rank builds every node and link, with
// the same node ids, but only its own switches get a SharedBuffer and queue discs, and only its own
// switches and hosts ever run an event.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "sim/ns3/fabric_partition.h"
#include "sim/ns3/scenario.h"
#include "sim/ns3/sharebuf_queue_disc.h"

namespace sharebuf::sim {

struct FabricSwitch {
  std::string name, role;
  ns3::Ptr<ns3::Node> node;
  ns3::Ptr<SharebufSwitch> sw;  // null for another rank's switch
  bool local() const { return sw != nullptr; }
};

class Fabric {
 public:
  // Builds the network; throws std::runtime_error if a switch's configuration does not build.
  explicit Fabric(const Scenario& scenario, const FabricPartition& partition = {});

  const ns3::NodeContainer& hosts() const { return hosts_; }
  ns3::Ipv4Address host_ip(uint32_t h) const { return host_ip_[h]; }
  std::vector<FabricSwitch>& switches() { return switches_; }
  const std::vector<FabricSwitch>& switches() const { return switches_; }
  // The leaf a host hangs off (0 in a star).
  uint32_t leaf_of(uint32_t h) const;
  // The propagation round trip between two hosts (no queueing, no serialisation).
  int64_t base_rtt_ns(uint32_t a, uint32_t b) const;
  const FabricPartition& partition() const { return partition_; }

 private:
  const Scenario& s_;
  FabricPartition partition_;
  ns3::NodeContainer hosts_;
  std::vector<ns3::Ipv4Address> host_ip_;
  std::vector<FabricSwitch> switches_;
};

}  // namespace sharebuf::sim

// sharebuf's shared buffer in your own ns-3 program: a star of hosts around one switch node
// whose ports are SharebufQueueDiscs sharing one buffer, run once per policy, with FlowMonitor's
// view of each run. Copy this folder into your project (see README.md beside it).
//
//   star_two_policies [--policies=dt,lqd] [--hosts=8] [--buffer=300KB] [--time=0.05]
//                     [--out=flowmon]
//
// Hosts 1..n-1 send TCP (BulkSend) to host 0 and UDP bursts to host 1, so two ports share the
// buffer under the policy; it prints each policy's drops and flows, and writes FlowMonitor's XML
// per policy (OUT-POLICY.xml).
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/flow-monitor-helper.h"
#include "ns3/internet-module.h"
#include "ns3/ipv4-flow-probe.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "sharebuf-module.h"

using namespace ns3;

namespace {

// The switch's configuration: sharebufd's TOML (docs/configuration.md in sharebuf). Ports come
// from the node's devices; the Policy and BufferSize attributes override [policy] and [buffer].
const char* kConfig = R"(
[buffer]
cell_bytes = 80
[[classes]]
name = "data"
ecn_threshold = "60KB"
)";

void RunOnce(const std::string& policy, uint32_t n, const std::string& buffer, double seconds,
             const std::string& out) {
  NodeContainer hosts, sw;
  hosts.Create(n);
  sw.Create(1);
  InternetStackHelper stack;
  stack.InstallAll();
  PointToPointHelper link;
  link.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
  link.SetChannelAttribute("Delay", StringValue("2us"));

  TrafficControlHelper switch_ports;
  switch_ports.SetRootQueueDisc("sharebuf::SharebufQueueDisc", "Config", StringValue(kConfig),
                                "Policy", StringValue(policy), "BufferSize", StringValue(buffer));
  TrafficControlHelper host_nics;
  host_nics.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("10000p"));

  Ipv4AddressHelper addr("198.18.0.0", "255.255.255.0");
  std::vector<Ipv4Address> ip;
  QueueDiscContainer ports;
  for (uint32_t h = 0; h < n; ++h) {
    NetDeviceContainer d = link.Install(hosts.Get(h), sw.Get(0));
    host_nics.Install(d.Get(0));
    ports.Add(switch_ports.Install(d.Get(1)));
    ip.push_back(addr.Assign(d).GetAddress(0));
    addr.NewNetwork();
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  PacketSinkHelper tcp_sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
  tcp_sink.Install(hosts.Get(0));
  PacketSinkHelper udp_sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
  udp_sink.Install(hosts.Get(1));
  for (uint32_t h = 2; h < n; ++h) {
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ip[0], 9));
    bulk.Install(hosts.Get(h)).Start(MicroSeconds(5 * h));
    OnOffHelper burst("ns3::UdpSocketFactory", InetSocketAddress(ip[1], 9));
    burst.SetConstantRate(DataRate("4Gbps"), 1400);
    burst.SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=0.0005]"));
    burst.SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=0.005]"));
    burst.Install(hosts.Get(h)).Start(MilliSeconds(1));
  }

  FlowMonitorHelper flowmon;
  Ptr<FlowMonitor> monitor = flowmon.InstallAll();
  Simulator::Stop(Seconds(seconds));
  Simulator::Run();

  uint64_t received = 0, dropped = 0, marked = 0;
  for (uint32_t i = 0; i < ports.GetN(); ++i) {
    const QueueDisc::Stats& st = ports.Get(i)->GetStats();
    received += st.nTotalReceivedPackets;
    dropped += st.nTotalDroppedPackets;
    marked += st.nTotalMarkedPackets;
  }
  uint64_t rx_bytes = 0, lost = 0;
  for (const auto& [id, f] : monitor->GetFlowStats()) {
    rx_bytes += f.rxBytes;
    if (f.packetsDropped.size() > Ipv4FlowProbe::DROP_QUEUE_DISC)
      lost += f.packetsDropped[Ipv4FlowProbe::DROP_QUEUE_DISC];
  }
  const std::string name =
      sw.Get(0)->GetObject<sharebuf::sim::SharebufSwitch>()->GetFacade().policy_name();
  std::cout << name << ": switch received " << received << " packets, dropped " << dropped
            << ", marked " << marked << "; FlowMonitor: " << monitor->GetFlowStats().size()
            << " flows, " << rx_bytes << " bytes delivered, " << lost
            << " packets lost in queue discs\n";
  monitor->SerializeToXmlFile(out + "-" + name + ".xml", false, false);
  Simulator::Destroy();
}

}  // namespace

int main(int argc, char** argv) {
  std::string policies = "dt,lqd", buffer = "300KB", out = "flowmon";
  uint32_t hosts = 8;
  double seconds = 0.05;
  // ECN-capable TCP, so the class's ECN threshold marks (ns-3's TCP sends Not-ECT by default).
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
  CommandLine cmd(__FILE__);
  cmd.AddValue("policies", "comma-separated sharebuf policies, one run each", policies);
  cmd.AddValue("hosts", "hosts around the switch (at least 3)", hosts);
  cmd.AddValue("buffer", "the shared buffer's size", buffer);
  cmd.AddValue("time", "simulated seconds per run", seconds);
  cmd.AddValue("out", "FlowMonitor XML files: OUT-POLICY.xml", out);
  cmd.Parse(argc, argv);
  if (hosts < 3) {
    std::cerr << "star_two_policies: --hosts must be at least 3\n";
    return 2;
  }
  std::stringstream list(policies);
  for (std::string p; std::getline(list, p, ',');)
    RunOnce(p, hosts, buffer, seconds, out);
  return 0;
}

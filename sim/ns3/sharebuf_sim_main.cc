// sharebuf-sim: sharebuf's buffer and policies as the switch of an ns-3 network (C++17: ns-3's
// headers). This first version builds a star: R receivers and N senders, each on its own port of
// one switch whose egress queues live in one SharedBuffer (sim/ns3/switch_facade.h). Traffic:
// one long TCP flow per sender to receiver i mod R (--workload long), web-search flows at a load
// (--workload websearch, sim/ns3/flow_workload.h), or constant-rate UDP (--udp-load). It samples
// every queue's occupancy and threshold and prints a summary (JSON). The leaf-spine fabric, the
// scenario file and incast queries of issue 18 are not built yet (docs/ns3.md).
//
//   sharebuf-sim --switch-config FILE [--senders 4] [--receivers 1] [--link-rate 10Gbps]
//       [--delay 10us] [--duration 0.2] [--transport dctcp|cubic] [--rto-min 10ms]
//       [--queues 1] [--sample-us 50] [--csv FILE] [--seed 1] [--udp-load X]
//       [--workload long|websearch] [--load 0.5] [--cdf FILE] [--flows-csv FILE] [--record DIR]
//
// FILE is a sharebufd configuration without [[ports]]: sharebuf-sim adds one port per host (rate
// = --link-rate, --queues queues). Deterministic: the same arguments give the same output.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "sim/ns3/flow_workload.h"
#include "sim/ns3/sharebuf_queue_disc.h"

using namespace ns3;
using sharebuf::sim::SharebufQueueDisc;
using sharebuf::sim::SharebufSwitchNode;
using sharebuf::sim::SwitchFacade;

namespace {

struct Sample {
  double t;
  uint32_t port, queue, cells, threshold;
};

std::vector<Sample> g_samples;

// Progress on stderr every tenth of the simulated time, with the wall-clock time so far.
void progress(double duration, int tenth, std::chrono::steady_clock::time_point started) {
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "sharebuf-sim: %3d %% of %.3f s simulated, %.1f s wall clock\n", tenth * 10,
               duration, wall);
  if (tenth < 10)
    Simulator::Schedule(Seconds(duration / 10), &progress, duration, tenth + 1, started);
}

void sample(std::shared_ptr<SharebufSwitchNode> sw, Time every) {
  const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
  for (uint32_t p = 0; p < sw->facade->ports(); ++p) {
    for (uint32_t k = 0; k < sw->facade->queues(p); ++k) {
      g_samples.push_back({Simulator::Now().GetSeconds(), p, k, sw->facade->queue_cells(p, k),
                           sw->facade->threshold_cells(p, k, now)});
    }
  }
  Simulator::Schedule(every, &sample, sw, every);
}

}  // namespace

int main(int argc, char** argv) {
  std::string switch_config, link_rate = "10Gbps", delay = "10us", transport = "dctcp",
                             rto_min = "10ms", csv, record;
  double udp_load = 0, load = 0.5;
  std::string workload = "long", cdf = SHAREBUF_DATA_DIR "/websearch-flow-size-cdf.txt", flows_csv;
  uint32_t senders = 4, receivers = 1, queues = 1, sample_us = 50, seed = 1;
  bool quiet = false;
  double duration = 0.2;
  CommandLine cmd("sharebuf-sim");
  cmd.Usage(
      "sharebuf's buffer and policies as the switch of an ns-3 star (see the source's head).");
  cmd.AddValue("switch-config", "sharebufd configuration without [[ports]]", switch_config);
  cmd.AddValue("senders", "sender hosts", senders);
  cmd.AddValue("receivers", "hosts receiving (sender i sends to receiver i mod R)", receivers);
  cmd.AddValue("link-rate", "every link's rate (ns-3 DataRate)", link_rate);
  cmd.AddValue("delay", "every link's one-way delay", delay);
  cmd.AddValue("duration", "simulated seconds", duration);
  cmd.AddValue("transport", "dctcp or cubic", transport);
  cmd.AddValue("workload",
               "long (one endless TCP flow per sender) or websearch (Poisson flows, sizes from "
               "--cdf, at --load of each sender's link, during the first 80 % of --duration)",
               workload);
  cmd.AddValue("load", "websearch: offered load per sender (0-1)", load);
  cmd.AddValue("cdf", "websearch: flow-size CDF file", cdf);
  cmd.AddValue("flows-csv",
               "websearch: write every flow (id,src,dst,bytes,start_ns,fct_ns,slowdown)",
               flows_csv);
  cmd.AddValue("udp-load",
               "instead of TCP, each sender sends UDP at this multiple of the link rate", udp_load);
  cmd.AddValue("rto-min", "TCP minimum retransmission timeout", rto_min);
  cmd.AddValue("queues", "queues per switch port", queues);
  cmd.AddValue("sample-us", "occupancy sample interval (microseconds)", sample_us);
  cmd.AddValue("csv", "write the occupancy samples here (time_s,port,queue,cells,threshold)", csv);
  cmd.AddValue("seed", "ns-3 run number", seed);
  cmd.AddValue("quiet", "no progress lines on stderr", quiet);
  cmd.AddValue("record",
               "write DIR/switch.toml, DIR/arrivals.csv and DIR/fates.csv: the switch's arrivals "
               "and their fates, for sharebuf-replay --config --csv --fates",
               record);
  cmd.Parse(argc, argv);
  if (switch_config.empty()) {
    std::cerr << "sharebuf-sim: --switch-config FILE is required (--help)\n";
    return 2;
  }
  if (workload != "long" && workload != "websearch") {
    std::cerr << "sharebuf-sim: --workload must be long or websearch\n";
    return 2;
  }
  if (!(load > 0 && load <= 1)) {
    std::cerr << "sharebuf-sim: --load must be in (0, 1]\n";
    return 2;
  }
  if (transport != "dctcp" && transport != "cubic") {
    std::cerr << "sharebuf-sim: --transport must be dctcp or cubic\n";
    return 2;
  }
  if (senders == 0 || receivers == 0 || senders + receivers > 64) {
    std::cerr << "sharebuf-sim: 1-63 senders and receivers, 64 ports at most\n";
    return 2;
  }
  std::ifstream in(switch_config);
  if (!in) {
    std::cerr << "sharebuf-sim: cannot read " << switch_config << "\n";
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("[[ports]]") != std::string::npos) {
    std::cerr << "sharebuf-sim: " << switch_config
              << ": leave out [[ports]]; sharebuf-sim adds one per host\n";
    return 2;
  }
  const uint64_t rate_bps = DataRate(link_rate).GetBitRate();
  const uint32_t hosts = senders + receivers;
  for (uint32_t i = 0; i < hosts; ++i) {
    text << "\n[[ports]]\ninterface = \"h" << i << "\"\nrate = \"" << rate_bps
         << "bit\"\nqueues = " << queues << "\n";
  }
  std::shared_ptr<SharebufSwitchNode> sw = std::make_shared<SharebufSwitchNode>();
  try {
    sw->facade = SwitchFacade::from_toml(text.str(), switch_config);
  } catch (const std::exception& e) {
    std::cerr << "sharebuf-sim: " << e.what() << "\n";
    return 2;
  }
  if (!record.empty()) sw->facade->record();

  RngSeedManager::SetSeed(1);
  RngSeedManager::SetRun(seed);
  Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                     TypeIdValue(transport == "dctcp" ? TypeId::LookupByName("ns3::TcpDctcp")
                                                      : TypeId::LookupByName("ns3::TcpCubic")));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(rto_min)));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
  if (transport == "dctcp") Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
  // The device's own queue holds one packet: the queue disc's dequeue is the transmission start.
  Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("1p"));

  NodeContainer host_nodes;
  host_nodes.Create(hosts);
  Ptr<Node> switch_node = CreateObject<Node>();
  InternetStackHelper stack;
  stack.Install(host_nodes);
  stack.Install(switch_node);
  PointToPointHelper link;
  link.SetDeviceAttribute("DataRate", StringValue(link_rate));
  link.SetChannelAttribute("Delay", StringValue(delay));
  Ipv4AddressHelper addresses;
  std::vector<Ipv4Address> host_ip;
  for (uint32_t i = 0; i < hosts; ++i) {
    NetDeviceContainer devs = link.Install(host_nodes.Get(i), switch_node);
    // The switch side: its port i is a sharebuf queue disc on the shared buffer.
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("sharebuf::SharebufQueueDisc");
    QueueDiscContainer qd = tch.Install(devs.Get(1));
    DynamicCast<SharebufQueueDisc>(qd.Get(0))->Attach(sw, i);
    std::ostringstream net;
    net << "198.18." << i << ".0";
    addresses.SetBase(net.str().c_str(), "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(devs);
    host_ip.push_back(ifs.GetAddress(0));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  const uint16_t port = 5000;
  for (uint32_t r = 0; r < receivers; ++r) {
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer apps = sink.Install(host_nodes.Get(r));
    apps.Start(Seconds(0));
  }
  std::unique_ptr<sharebuf::sim::FlowWorkload> flows;
  if (workload == "websearch" && udp_load == 0) {
    std::vector<uint32_t> tx, rx;
    for (uint32_t r = 0; r < receivers; ++r)
      rx.push_back(r);
    for (uint32_t s = 0; s < senders; ++s)
      tx.push_back(receivers + s);
    sharebuf::sim::FlowWorkload::Settings ws;
    ws.load = load;
    ws.link_bps = rate_bps;
    ws.until_ns = static_cast<int64_t>(duration * 0.8e9);
    ws.base_rtt_ns = 4 * Time(delay).GetNanoSeconds();
    ws.cdf_path = cdf;
    try {
      flows = std::make_unique<sharebuf::sim::FlowWorkload>(host_nodes, host_ip, tx, rx, ws);
    } catch (const std::exception& e) {
      std::cerr << "sharebuf-sim: " << e.what() << "\n";
      return 2;
    }
    flows->Start();
  } else {
    for (uint32_t s = 0; s < senders; ++s) {
      const uint32_t host = receivers + s;
      ApplicationContainer apps;
      if (udp_load > 0) {
        // Constant-rate UDP (always on): a queue it overloads stays at the policy's threshold.
        OnOffHelper udp("ns3::UdpSocketFactory",
                        InetSocketAddress(host_ip[s % receivers], port + 1));
        udp.SetConstantRate(
            DataRate(static_cast<uint64_t>(udp_load * static_cast<double>(rate_bps))), 1472);
        apps = udp.Install(host_nodes.Get(host));
      } else {
        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(host_ip[s % receivers], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        apps = bulk.Install(host_nodes.Get(host));
      }
      apps.Start(MicroSeconds(10 * s));
    }
  }
  Simulator::Schedule(MicroSeconds(sample_us), &sample, sw, MicroSeconds(sample_us));
  if (!quiet)
    Simulator::Schedule(Seconds(duration / 10), &progress, duration, 1,
                        std::chrono::steady_clock::now());
  Simulator::Stop(Seconds(duration));
  Simulator::Run();
  Simulator::Destroy();

  if (!record.empty()) {
    std::ofstream(record + "/switch.toml") << text.str();
    std::ofstream(record + "/arrivals.csv") << sw->facade->arrivals_csv();
    std::ofstream(record + "/fates.csv") << sw->facade->fates_csv(sw->facade->policy_name());
    if (!std::ofstream(record + "/fates.csv", std::ios::app)) {
      std::cerr << "sharebuf-sim: cannot write into " << record << "\n";
      return 2;
    }
  }
  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "time_s,port,queue,cells,threshold\n";
    for (const Sample& s : g_samples)
      out << s.t << ',' << s.port << ',' << s.queue << ',' << s.cells << ',' << s.threshold << '\n';
  }
  // Summary: per receiver port, peak and mean occupancy over the second half.
  std::cout << "{\"policy\": \"" << sw->facade->policy_name()
            << "\", \"capacity_cells\": " << sw->facade->capacity_cells() << ", \"ports\": [";
  for (uint32_t r = 0; r < receivers; ++r) {
    uint32_t peak = 0;
    double sum = 0;
    uint32_t n = 0;
    for (const Sample& s : g_samples) {
      if (s.port != r || s.queue != 0 || s.t < duration / 2) continue;
      peak = std::max(peak, s.cells);
      sum += s.cells;
      ++n;
    }
    std::cout << (r ? ", " : "") << "{\"port\": " << r << ", \"peak_cells\": " << peak
              << ", \"mean_cells\": " << (n ? sum / n : 0.0) << "}";
  }
  std::cout << "], \"counters\": " << sw->facade->counters_json();
  if (flows) {
    std::cout << ", \"flows\": " << flows->SummaryJson();
    if (!flows_csv.empty()) flows->WriteCsv(flows_csv);
  }
  std::cout << "}\n";
  return 0;
}

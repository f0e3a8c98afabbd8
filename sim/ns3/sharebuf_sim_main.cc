// sharebuf-sim: sharebuf's buffer and policies as the switches of an ns-3 network (C++17: ns-3's
// headers). A scenario file (sim/ns3/scenario.h, docs/ns3.md) describes a star or a leaf-spine
// fabric, every switch's sharebufd configuration, the transport, the workloads and the run; each
// switch's egress queues live in one SharedBuffer admitted by sharebuf's own policy objects.
//
//   sharebuf-sim SCENARIO [--set key.path=value ...] [--out DIR] [--record DIR] [--check]
//                [--quiet]
//   mpirun -np N sharebuf-sim-mpi SCENARIO ... [--mpi-scheduler granted-time-window|null-message]
//
// Prints a JSON summary (flows by kind and size, queries, every switch's occupancy and drops);
// --out also writes summary.json, flows.csv, queries.csv, occupancy.csv and the effective
// scenario. Deterministic: the same scenario and seed give the same bytes out, on any number of
// ranks (sharebuf-sim-mpi: the fabric cut at its spine links, fabric_partition.h; rank 0 gathers
// the results and writes them).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/version.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "sim/ns3/fabric.h"
#include "sim/ns3/fabric_partition.h"
#include "sim/ns3/fabric_stats.h"
#include "sim/ns3/ranks.h"
#include "sim/ns3/scenario.h"
#include "sim/ns3/traffic.h"

using sharebuf::sim::Fabric;
using sharebuf::sim::FabricPartition;
using sharebuf::sim::FabricStats;
using sharebuf::sim::Ranks;
using sharebuf::sim::Scenario;
using sharebuf::sim::Traffic;

namespace {

// ns-3's defaults for the scenario's transport (before any node exists).
void configure_transport(const Scenario& s) {
  using namespace ns3;
  const char* cc = s.cc == "dctcp"   ? "ns3::TcpDctcp"
                   : s.cc == "cubic" ? "ns3::TcpCubic"
                                     : "ns3::TcpNewReno";
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(cc)));
  if (s.ecn) Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
  Config::SetDefault("ns3::TcpSocketBase::MinRto",
                     TimeValue(NanoSeconds(static_cast<int64_t>(s.rto_min_ns))));
  // RTO = max(rto_min, srtt + 4 rttvar), as Linux: ns-3's default 1 ms clock granularity would
  // add a millisecond to every timeout.
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
  Config::SetDefault("ns3::RttEstimator::InitialEstimation",
                     TimeValue(NanoSeconds(static_cast<int64_t>(s.initial_rtt_ns))));
  // A lost SYN or SYN-ACK is retried after syn_timeout (default rto_min), not ns-3's 3 s
  // (TcpSocketBase::SendEmptyPacket doubles it per retry, ReTxTimeout resends).
  Config::SetDefault("ns3::TcpSocket::ConnTimeout",
                     TimeValue(NanoSeconds(static_cast<int64_t>(
                         s.syn_timeout_ns != 0 ? s.syn_timeout_ns : s.rto_min_ns))));
  Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(s.syn_retries));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(s.initial_cwnd));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(s.segment_bytes));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(s.delayed_ack));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(s.socket_buffer_bytes));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(s.socket_buffer_bytes));
  // A device's own queue holds one packet: the queue disc's dequeue starts a transmission.
  Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("1p"));
}

// Progress on stderr for long runs: a line every 5 s of wall clock or so (checked every 1 % of
// the simulated time), none for a run that ends sooner.
struct Progress {
  const Scenario& s;
  const Traffic& traffic;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  double last_print = 0;
  static constexpr int kSteps = 100;

  void check(int step) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (wall - last_print >= 5) {
      last_print = wall;
      const double done = static_cast<double>(step) / kSteps;
      std::fprintf(stderr,
                   "sharebuf-sim: %3.0f %% of %.3f s simulated, %.0f s wall clock (about %.0f s "
                   "left); %zu flows started, %llu complete%s\n",
                   done * 100, static_cast<double>(s.duration_ns) / 1e9, wall,
                   wall / done * (1 - done), traffic.flows().size(),
                   static_cast<unsigned long long>(traffic.completed()),
                   Ranks::Size() > 1 ? " at rank 0's hosts" : "");
    }
    if (step < kSteps) schedule(step + 1);
  }
  void schedule(int step) {
    ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<int64_t>(s.duration_ns / kSteps)),
                             &Progress::check, this, step);
  }
};

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario_path, out_dir, record_dir;
  std::vector<std::string> overrides;
  bool check = false, quiet = false;
  CLI::App app{
      "sharebuf-sim: sharebuf's shared buffer and policies as the switches of an ns-3 network "
      "(a star or a leaf-spine fabric), from a scenario file (docs/ns3.md).",
      "sharebuf-sim"};
  app.set_version_flag("--version", "sharebuf-sim " + std::string(sharebuf::common::kVersion));
  app.add_option("scenario", scenario_path, "scenario file (TOML)")->required();
  app.add_option("--set", overrides,
                 "override a scenario key: key.path=value (TOML value, or a string), e.g. "
                 "--set switches.policy.name=protean --set workload.websearch.load=0.6")
      ->allow_extra_args(false);
  app.add_option("--out", out_dir,
                 "write summary.json, flows.csv, queries.csv, occupancy.csv and scenario.toml "
                 "into DIR (made if missing)");
  app.add_option("--record", record_dir,
                 "write DIR/<switch>/switch.toml, arrivals.csv, fates.csv and departures.csv for "
                 "every switch: "
                 "its arrivals and their fates, for sharebuf-replay --config --csv --fates (split "
                 "over MPI ranks: each rank writes its own switches, on its own machine)");
  app.add_flag("--check", check, "validate the scenario, print its switches and exit");
  app.add_flag("--quiet", quiet, "no progress lines on stderr");
  std::string scheduler = Ranks::kSchedulers[0];
  if (Ranks::Distributed()) {
    app.add_option("--mpi-scheduler", scheduler,
                   "how the ranks keep in step: granted-time-window (a barrier of all ranks "
                   "every lookahead, the smallest delay of a link between ranks) or "
                   "null-message (messages between neighbouring ranks only)")
        ->check(CLI::IsMember({Ranks::kSchedulers[0], Ranks::kSchedulers[1]}))
        ->capture_default_str();
  }
  CLI11_PARSE(app, argc, argv);

  Ranks::Start(&argc, &argv, scheduler);
  const bool root = Ranks::Rank() == 0;
  Scenario s;
  FabricPartition partition;
  try {
    s = sharebuf::sim::load_scenario(scenario_path, overrides);
    partition = FabricPartition(s, Ranks::Size(), Ranks::Rank());
  } catch (const std::exception& e) {
    // Every rank finds the same error; one says it.
    if (root) std::cerr << "sharebuf-sim: " << e.what() << "\n";
    Ranks::Finish();
    return 2;
  }
  if (check) {
    if (root) {
      std::cout << scenario_path << ": valid; " << s.hosts << " hosts, " << s.switches.size()
                << " switch(es):";
      for (uint32_t i = 0; i < s.switches.size(); ++i) {
        std::cout << ' ' << s.switches[i].name;
        if (partition.ranks() > 1) std::cout << "@" << partition.switch_owner(i);
      }
      std::cout << "\n";
    }
    Ranks::Finish();
    return 0;
  }

  try {
    if (!out_dir.empty() && root) std::filesystem::create_directories(out_dir);
    ns3::RngSeedManager::SetSeed(1);
    ns3::RngSeedManager::SetRun(s.seed);
    configure_transport(s);
    Fabric fabric(s, partition);
    if (!record_dir.empty()) {
      for (auto& sw : fabric.switches()) {
        if (sw.local()) sw.sw->GetFacade().record();
      }
    }
    Traffic traffic(s, fabric);
    traffic.Start();
    FabricStats stats(s, fabric,
                      out_dir.empty() ? "" : (std::filesystem::path(out_dir) / "occupancy.csv"));
    stats.Start();
    Progress progress{s, traffic};
    if (!quiet && root) progress.schedule(1);
    ns3::Simulator::Stop(ns3::NanoSeconds(static_cast<int64_t>(s.duration_ns)));
    ns3::Simulator::Run();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - progress.started).count();

    // Every rank's receivers and switches, on rank 0.
    const std::vector<std::string> results = Ranks::Gather(traffic.LocalResults());
    const std::vector<std::string> switches = Ranks::Gather(stats.Local());
    if (!record_dir.empty()) {
      for (const auto& sw : fabric.switches()) {
        if (!sw.local()) continue;
        const std::filesystem::path d = std::filesystem::path(record_dir) / sw.name;
        std::filesystem::create_directories(d);
        const auto& spec = *std::find_if(s.switches.begin(), s.switches.end(),
                                         [&](const auto& x) { return x.name == sw.name; });
        write_file(d / "switch.toml", spec.config_toml);
        write_file(d / "arrivals.csv", sw.sw->GetFacade().arrivals_csv());
        write_file(d / "fates.csv", sw.sw->GetFacade().fates_csv(sw.sw->GetFacade().policy_name()));
        write_file(d / "departures.csv",
                   sw.sw->GetFacade().departures_csv(sw.sw->GetFacade().policy_name()));
      }
    }
    if (!root) {
      ns3::Simulator::Destroy();
      Ranks::Finish();
      return 0;
    }
    for (const std::string& r : results)
      traffic.MergeResults(r);
    traffic.Finish();

    nlohmann::json summary = {
        {"scenario", scenario_path},
        {"overrides", overrides},
        {"seed", s.seed},
        {"simulated_s", static_cast<double>(s.duration_ns) / 1e9},
        {"hosts", s.hosts},
        {"oversubscription", s.oversubscription},
        {"ecmp_seed", s.ecmp_seed},
        {"traffic",
         nlohmann::json::parse(traffic.SummaryJson(static_cast<int64_t>(s.duration_ns)))},
        {"switches", nlohmann::json::parse(stats.Merge(switches))}};
    if (!out_dir.empty()) {
      const std::filesystem::path d(out_dir);
      write_file(d / "summary.json", summary.dump(2) + "\n");
      write_file(d / "scenario.toml", s.text);
      traffic.WriteFlowsCsv(d / "flows.csv");
      traffic.WriteQueriesCsv(d / "queries.csv");
    }
    ns3::Simulator::Destroy();
    std::cout << summary.dump() << "\n";
    if (!quiet) {
      std::fprintf(
          stderr, "sharebuf-sim: done in %.1f s wall clock%s\n", wall,
          Ranks::Size() > 1 ? (" on " + std::to_string(Ranks::Size()) + " ranks").c_str() : "");
    }
  } catch (const std::exception& e) {
    std::cerr << "sharebuf-sim: " << e.what() << "\n";
    if (Ranks::Size() > 1) Ranks::Abort(1);
    Ranks::Finish();
    return 1;
  }
  Ranks::Finish();
  return 0;
}

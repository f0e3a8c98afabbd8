#include "tests/parity/engine_parity.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "config/switch_config_reader.h"
#include "datapath/rx_worker.h"
#include "model/frame_parser.h"
#include "sim/ns3/switch_facade.h"
#include "sim/replay.h"
#include "sim/replay_inputs.h"
#include "tests/datapath/memory_switch.h"

namespace sharebuf::testing {
namespace {

constexpr uint64_t kBurstAtNs = 1'000'000;  // the replay's and ns-3's burst: 1 ms after start

model::SwitchConfig config_of(const Scenario& s) {
  return config::parse_switch_config(s.toml, "parity.toml");
}

uint32_t smallest_frame(const Scenario& s) {
  uint32_t m = std::numeric_limits<uint32_t>::max();
  for (const BurstFrame& f : s.burst)
    m = std::min(m, static_cast<uint32_t>(f.bytes.size()));
  return m;
}

// A departures CSV (sim/replay.h kDeparturesHeader: policy,t_ns,queue,arrival_ns,bytes,cut,ce)
// as a wire: the flat queue id names the port.
Wire wire_from_departures(const std::string& csv, const model::SwitchConfig& cfg) {
  std::vector<uint32_t> port_of_queue;
  for (uint32_t p = 0; p < cfg.ports.size(); ++p)
    port_of_queue.insert(port_of_queue.end(), cfg.ports[p].num_queues, p);
  Wire w(cfg.ports.size());
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, sim::kDeparturesHeader);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');)
      f.push_back(cell);
    if (f.size() != 7) {
      ADD_FAILURE() << "departure row: " << line;
      continue;
    }
    const uint32_t q = static_cast<uint32_t>(std::stoul(f[2]));
    w.at(port_of_queue.at(q))
        .push_back({.bytes = static_cast<uint32_t>(std::stoul(f[4])),
                    .cut = f[5] == "1",
                    .ce = f[6] == "1"});
  }
  return w;
}

// A pcap file (microsecond stamps, Ethernet) holding the burst, every frame at time 0.
std::string write_pcap(const Scenario& s) {
  static std::atomic<int> serial{0};
  const std::string path = ::testing::TempDir() + "/parity-" + std::to_string(getpid()) + "-" +
                           std::to_string(serial.fetch_add(1)) + ".pcap";
  std::ofstream out(path, std::ios::binary);
  const auto put32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  const auto put16 = [&](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
  put32(0xa1b2c3d4);
  put16(2);
  put16(4);
  put32(0);
  put32(0);
  put32(65535);
  put32(1);  // LINKTYPE_ETHERNET
  for (const BurstFrame& f : s.burst) {
    put32(0);
    put32(0);
    put32(static_cast<uint32_t>(f.bytes.size()));
    put32(static_cast<uint32_t>(f.bytes.size()));
    out.write(reinterpret_cast<const char*>(f.bytes.data()),
              static_cast<std::streamsize>(f.bytes.size()));
  }
  return path;
}

}  // namespace

Wire run_live(const Scenario& s) {
  const size_t n = s.burst.size();
  EXPECT_LE(n, datapath::RxWorker::kBurst) << "a larger burst is handled in more than one batch";
  const uint32_t smallest = smallest_frame(s);
  Wire w;
  {
    MemorySwitch sw(s.toml);
    sw.start();
    // Every egress thread asleep: none takes a frame until the RX worker has admitted the burst
    // and wakes it (or sends inline).
    EXPECT_TRUE(eventually([&] { return sw.all_egress_asleep(); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // clock-driven state, as 1 ms
    std::vector<std::vector<uint8_t>> frames;
    for (const BurstFrame& f : s.burst)
      frames.push_back(f.bytes);
    EXPECT_EQ(sw.port(0).inject_burst(frames), n);
    EXPECT_TRUE(eventually([&] { return sw.quiet(); }));
    sw.stop();
    const size_t ports = sw.core().ports.size();
    w.resize(ports);
    for (size_t p = 0; p < ports; ++p) {
      for (const std::vector<uint8_t>& f : sw.port(p).sent()) {
        const model::ParsedFrame parsed = model::parse_frame(std::span<const uint8_t>(f));
        w[p].push_back({.bytes = static_cast<uint32_t>(f.size()),
                        .cut = f.size() < smallest,
                        .ce = parsed.ok() && parsed.ecn == 3});
      }
    }
  }
  return w;
}

Wire run_replay(const Scenario& s) {
  const model::SwitchConfig cfg = config_of(s);
  const std::string pcap = write_pcap(s);
  sim::PcapReadStats stats;
  std::vector<sim::ReplayArrival> arrivals = sim::read_arrivals_pcap({{pcap, 0}}, cfg, stats);
  std::remove(pcap.c_str());
  for (sim::ReplayArrival& a : arrivals)
    a.time_ns += kBurstAtNs;
  std::ostringstream departures;
  departures << sim::kDeparturesHeader << '\n';
  sim::ReplayOptions o;
  o.arrivals_first = true;  // the instant's arrivals, then its departures: the live batch
  o.end_ns = sim::default_end_ns(arrivals);
  o.departures = &departures;
  const sim::ReplayResult r = sim::run_replay(
      sim::replay_config(cfg), {cfg.policy, cfg.policy, cfg.policy_params}, arrivals, o);
  for (const std::string& e : r.accounting_errors)
    ADD_FAILURE() << "replay accounting: " << e;
  return wire_from_departures(departures.str(), cfg);
}

Wire run_ns3(const Scenario& s) {
  const model::SwitchConfig cfg = config_of(s);
  const std::unique_ptr<sim::SwitchFacade> sw = sim::SwitchFacade::from_toml(s.toml, "parity.toml");
  sw->record();
  // SharebufQueueDisc's part: each packet to the egress its routing chose, classified by its
  // DSCP, with its ECN capability, flow hash and ingress port.
  for (size_t i = 0; i < s.burst.size(); ++i) {
    const BurstFrame& f = s.burst[i];
    EXPECT_GE(f.dst_port, 0) << "ns-3 routes each packet to one port: no flooding";
    const model::ParsedFrame p = model::parse_frame(std::span<const uint8_t>(f.bytes));
    sw->arrive({.port = static_cast<uint32_t>(std::max(f.dst_port, 0)),
                .bytes = static_cast<uint32_t>(f.bytes.size()),
                .dscp = p.dscp,
                .ect = p.ect(),
                .flow_hash = model::flow_hash(p),
                .in_port = 0},
               kBurstAtNs, i + 1);
  }
  // The queue disc's clock: a port starts its next frame when the last one has left; within an
  // instant, departures (lowest port first) before the recirculation ports' releases.
  std::vector<uint64_t> busy(sw->ports(), kBurstAtNs);
  uint64_t now = kBurstAtNs;
  const auto holds = [&](uint32_t p) {
    for (uint32_t k = 0; k < sw->queues(p); ++k)
      if (sw->queue_cells(p, k) != 0) return true;
    return false;
  };
  for (;;) {
    uint64_t start = std::numeric_limits<uint64_t>::max();
    uint32_t port = 0;
    for (uint32_t p = 0; p < sw->ports(); ++p) {
      if (holds(p) && std::max(busy[p], now) < start) {
        start = std::max(busy[p], now);
        port = p;
      }
    }
    const uint64_t release = sw->next_release_ns();
    if (start == std::numeric_limits<uint64_t>::max() && release == UINT64_MAX) break;
    if (start <= release) {
      now = start;
      sim::SwitchFacade::Departure d;
      if (!sw->next(port, now, &d)) break;
      busy[port] = now + sw->transmit_ns(port, d.bytes);
    } else {
      now = release;
      sw->release(now);
    }
  }
  return wire_from_departures(sw->departures_csv(cfg.policy), cfg);
}

Wire sorted(Wire w) {
  for (std::vector<Tx>& p : w)
    std::sort(p.begin(), p.end(), [](const Tx& a, const Tx& b) {
      return std::tie(a.bytes, a.cut, a.ce) < std::tie(b.bytes, b.cut, b.ce);
    });
  return w;
}

size_t count_cut(const std::vector<Tx>& port) {
  return static_cast<size_t>(
      std::count_if(port.begin(), port.end(), [](const Tx& t) { return t.cut; }));
}

size_t count_ce(const std::vector<Tx>& port) {
  return static_cast<size_t>(
      std::count_if(port.begin(), port.end(), [](const Tx& t) { return t.ce; }));
}

std::string describe(const Wire& w) {
  std::string out;
  for (size_t p = 0; p < w.size(); ++p) {
    out += "\n  port " + std::to_string(p) + " (" + std::to_string(w[p].size()) + "):";
    for (const Tx& t : w[p])
      out +=
          std::string(" ") + (t.cut ? "cut:" : "") + (t.ce ? "ce:" : "") + std::to_string(t.bytes);
  }
  return out;
}

}  // namespace sharebuf::testing

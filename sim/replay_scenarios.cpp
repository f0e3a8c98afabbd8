#include "sim/replay_scenarios.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "common/data_files.h"

namespace sharebuf::sim {
using common::FlowSizeCdf;

namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kGbps = 1'000'000'000ull;
constexpr uint32_t kMtuFrame = 1500;

// `count` frames of `bytes` at `rate_bps` into `queue` from `start_ns`.
void constant_rate(std::vector<ReplayArrival>& out, uint32_t queue, uint64_t start_ns,
                   uint64_t rate_bps, uint32_t bytes, uint64_t count, uint32_t flow = 0) {
  const uint64_t gap_ns = uint64_t{bytes} * 8 * 1'000'000'000ull / rate_bps;
  for (uint64_t i = 0; i < count; ++i) {
    out.push_back(
        {.time_ns = start_ns + i * gap_ns, .queue = queue, .bytes = bytes, .flow_hash = flow});
  }
}

// A flow of `size` bytes as MTU frames (and a last, shorter one) at `rate_bps`.
void flow(std::vector<ReplayArrival>& out, uint32_t queue, uint64_t start_ns, uint64_t rate_bps,
          uint64_t size, uint32_t hash, uint64_t end_ns) {
  uint64_t t = start_ns;
  for (uint64_t left = size; left > 0 && t <= end_ns;) {
    const auto bytes = static_cast<uint32_t>(std::min<uint64_t>(left, kMtuFrame));
    out.push_back(
        {.time_ns = t, .queue = queue, .bytes = std::max<uint32_t>(bytes, 64), .flow_hash = hash});
    left -= bytes;
    t += uint64_t{bytes} * 8 * 1'000'000'000ull / rate_bps;
  }
}

void sort_by_time(std::vector<ReplayArrival>& v) {
  std::stable_sort(v.begin(), v.end(), [](const ReplayArrival& a, const ReplayArrival& b) {
    return a.time_ns < b.time_ns;
  });
}

ReplayScenario base(const std::string& name, uint32_t ports, uint32_t buffer_cells,
                    uint64_t rate_bps) {
  ReplayScenario s;
  s.name = name;
  s.config.name = name;
  s.config.source = "scenario " + name;
  s.config.buffer.capacity_cells = buffer_cells;
  s.config.classes.push_back({});
  s.config.classes.back().traffic.name = "default";
  for (uint32_t p = 0; p < ports; ++p) {
    s.config.ports.push_back({.name = "p" + std::to_string(p), .rate_bps = rate_bps});
    s.queue_labels.push_back("p" + std::to_string(p));
  }
  return s;
}

ReplayScenario burst(const ScenarioOptions& o) {
  ReplayScenario s = base("burst", 4, o.buffer_cells ? o.buffer_cells : 2000, kGbps);
  s.description =
      "4 ports x 1 Gbit/s, one queue each, 2000-cell buffer of 80 B cells. Queues 0 and 1: long "
      "flows at 2 Gbit/s for 20 ms (saturated). Queue 2: a 400-frame incast at 10 Gbit/s at "
      "t = 10 ms. Queue 3: idle.";
  s.queue_labels = {"long-0", "long-1", "incast", "idle"};
  s.end_ns = 20 * kMs;
  const uint64_t long_frames = 20 * kMs / (kMtuFrame * 8 / 2);  // one frame every 6 us
  constant_rate(s.arrivals, 0, 0, 2 * kGbps, kMtuFrame, long_frames, 1);
  constant_rate(s.arrivals, 1, 500, 2 * kGbps, kMtuFrame, long_frames, 2);
  constant_rate(s.arrivals, 2, 10 * kMs, 10 * kGbps, kMtuFrame, 400, 3);
  sort_by_time(s.arrivals);
  return s;
}

ReplayScenario poisson(const ScenarioOptions& o) {
  const uint32_t n = std::max<uint32_t>(o.ports, 1);
  ReplayScenario s = base("poisson", n, o.buffer_cells ? o.buffer_cells : 4000, kGbps);
  const double ms = o.duration_ms > 0 ? o.duration_ms : 20;
  s.end_ns = static_cast<uint64_t>(ms * kMs);
  std::ostringstream d;
  d << n << " ports x 1 Gbit/s; Poisson arrivals of 1500 B frames at load " << o.load
    << " of the line rate on every port, " << ms << " ms, seed " << o.seed << ".";
  s.description = d.str();
  std::mt19937_64 rng(o.seed);
  const double mean_gap_ns = kMtuFrame * 8.0 / (o.load * static_cast<double>(kGbps)) * 1e9;
  std::exponential_distribution<double> gap(1.0 / mean_gap_ns);
  for (uint32_t p = 0; p < n; ++p) {
    for (double t = gap(rng); t < static_cast<double>(s.end_ns); t += gap(rng))
      s.arrivals.push_back({.time_ns = static_cast<uint64_t>(t), .queue = p, .bytes = kMtuFrame});
  }
  sort_by_time(s.arrivals);
  return s;
}

ReplayScenario credence_fig3(const ScenarioOptions& o) {
  const uint32_t n = std::max<uint32_t>(o.ports, 2);
  const uint32_t b = o.buffer_cells ? o.buffer_cells : 2000;
  ReplayScenario s = base("credence-fig3", n, b, kGbps);
  const uint32_t frames = b / 19;  // 1500 B = 19 cells of 80 B: a burst of about B
  std::ostringstream d;
  d << "Credence Fig. 3: " << n << " ports x 1 Gbit/s, B = " << b
    << " cells, otherwise idle; every "
    << "5 ms a burst of " << frames << " x 1500 B (about B) arrives at 10 Gbit/s on one port "
    << "(the next port each time), 10 bursts. OPT (and LQD) transmit every frame; a drop-tail "
       "policy that keeps room for bursts that never come drops part of each.";
  s.description = d.str();
  s.end_ns = 50 * kMs;
  for (uint32_t k = 0; k < 10; ++k)
    constant_rate(s.arrivals, k % n, k * 5 * kMs, 10 * kGbps, kMtuFrame, frames, k + 1);
  sort_by_time(s.arrivals);
  return s;
}

ReplayScenario credence_fig4(const ScenarioOptions& o) {
  const uint32_t n = std::max<uint32_t>(o.ports, 8);
  // A buffer that holds more than a round's worth of transmission of the four bursty ports, so
  // the ports' time, not the buffer, limits throughput: what admitting the short bursts buys.
  const uint32_t b = o.buffer_cells ? o.buffer_cells : 8000;
  ReplayScenario s = base("credence-fig4", n, b, kGbps);
  const uint32_t big = b / 19;
  const uint32_t small = std::max<uint32_t>(1, b / 8 / 19);
  std::ostringstream d;
  d << "Credence Fig. 4: " << n << " ports x 1 Gbit/s, B = " << b << " cells; every 1 ms four "
    << "bursts of " << big << " x 1500 B (about B each) arrive at 10 Gbit/s on four ports at once, "
    << "and 200 us later (the buffer full) short bursts of " << small << " frames hit the other "
    << "ports; 20 rounds, the ports rotating; frames whose transmission starts within 20 ms count. "
       "OPT (and LQD) keep room for the short bursts, so more ports transmit at once.";
  s.description = d.str();
  s.end_ns = 20 * kMs;
  uint32_t hash = 1;
  for (uint32_t k = 0; k < 20; ++k) {
    const uint64_t t0 = k * kMs;
    for (uint32_t i = 0; i < 4; ++i)
      constant_rate(s.arrivals, (k + i) % n, t0 + i * 300, 10 * kGbps, kMtuFrame, big, hash++);
    for (uint32_t i = 4; i < n; ++i)
      constant_rate(s.arrivals, (k + i) % n, t0 + 200'000 + (i - 4) * 300, 10 * kGbps, kMtuFrame,
                    small, hash++);
  }
  sort_by_time(s.arrivals);
  return s;
}

ReplayScenario websearch(const ScenarioOptions& o) {
  const uint32_t n = std::max<uint32_t>(o.ports, 2);
  const uint32_t b = o.buffer_cells ? o.buffer_cells : 4000;
  ReplayScenario s = base("websearch", n, b, kGbps);
  const double ms = o.duration_ms > 0 ? o.duration_ms : 200;
  s.end_ns = static_cast<uint64_t>(ms * kMs);
  const std::string cdf_path =
      o.cdf_path.empty() ? common::data_file("websearch-flow-size-cdf.txt") : o.cdf_path;
  const FlowSizeCdf cdf = FlowSizeCdf::load(cdf_path);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<uint32_t> port(0, n - 1);
  // Mean flow size by sampling (the CDF is piecewise linear; 20000 draws are within ~1 %).
  double mean = 0;
  {
    std::mt19937_64 r2(o.seed ^ 0x5eed);
    for (int i = 0; i < 20000; ++i)
      mean += static_cast<double>(cdf.quantile(u(r2))) / 20000;
  }
  const double flows_per_s = o.load * n * static_cast<double>(kGbps) / (mean * 8);
  std::exponential_distribution<double> flow_gap(flows_per_s / 1e9);
  uint32_t hash = 1;
  uint64_t flows = 0;
  for (double t = flow_gap(rng); t < static_cast<double>(s.end_ns); t += flow_gap(rng), ++flows)
    flow(s.arrivals, port(rng), static_cast<uint64_t>(t), kGbps, cdf.quantile(u(rng)), hash++,
         s.end_ns);
  uint64_t queries = 0;
  const auto per_sender = static_cast<uint64_t>(o.query_fraction * b * s.config.buffer.cell_bytes /
                                                std::max<uint32_t>(o.fan_in, 1));
  if (o.query_rate > 0) {
    std::exponential_distribution<double> query_gap(o.query_rate / 1e9);
    for (double t = query_gap(rng); t < static_cast<double>(s.end_ns);
         t += query_gap(rng), ++queries) {
      const uint32_t target = port(rng);
      for (uint32_t f = 0; f < o.fan_in; ++f)
        flow(s.arrivals, target, static_cast<uint64_t>(t) + f * 100, kGbps, per_sender, hash++,
             s.end_ns);
    }
  }
  std::ostringstream d;
  d << n << " ports x 1 Gbit/s, B = " << b << " cells; web-search flows (mean " << mean / 1e3
    << " KB) with Poisson arrivals at load " << o.load << " (" << flows
    << " flows), each sent at 1 "
    << "Gbit/s to a random port; " << queries << " incast queries (" << o.query_rate << "/s), each "
    << o.fan_in << " senders x " << per_sender << " B at once into one port; " << ms << " ms, seed "
    << o.seed << ".";
  s.description = d.str();
  sort_by_time(s.arrivals);
  return s;
}

}  // namespace

std::vector<ScenarioInfo> scenarios() {
  return {{"burst", "long flows saturate two ports, a 20-to-1 incast hits a third (20 ms)"},
          {"poisson", "Poisson 1500 B arrivals at --load on every port (--ports, --duration-ms)"},
          {"websearch",
           "web-search flows at --load plus incast queries (--query-rate, --fan-in); 200 ms"},
          {"credence-fig3", "Credence Fig. 3: lone bursts of about B on an idle switch"},
          {"credence-fig4", "Credence Fig. 4: four bursts of B, then short bursts on other ports"}};
}

ReplayScenario make_scenario(const std::string& name, const ScenarioOptions& options) {
  if (name == "burst") return burst(options);
  if (name == "poisson") return poisson(options);
  if (name == "websearch") return websearch(options);
  if (name == "credence-fig3") return credence_fig3(options);
  if (name == "credence-fig4") return credence_fig4(options);
  std::string known;
  for (const auto& s : scenarios())
    known += (known.empty() ? "" : ", ") + s.name;
  throw std::invalid_argument("unknown scenario '" + name + "' (known scenarios: " + known + ")");
}

}  // namespace sharebuf::sim

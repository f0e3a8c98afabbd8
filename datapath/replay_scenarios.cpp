#include "datapath/replay_scenarios.h"

#include <algorithm>
#include <stdexcept>

namespace sharebuf::datapath {
namespace {

constexpr uint64_t kMs = 1'000'000;

// Frames of `bytes` at `rate_bps` into `queue` from `start_ns` for `count` frames.
void constant_rate(std::vector<ReplayArrival>& out, uint32_t queue, uint64_t start_ns,
                   uint64_t rate_bps, uint32_t bytes, uint64_t count) {
  const uint64_t gap_ns = uint64_t{bytes} * 8 * 1'000'000'000ull / rate_bps;
  for (uint64_t i = 0; i < count; ++i) {
    out.push_back({.time_ns = start_ns + i * gap_ns, .queue = queue, .bytes = bytes});
  }
}

}  // namespace

ReplayScenario burst_scenario() {
  ReplayScenario s;
  s.name = "burst";
  s.description =
      "4 ports x 1 Gbit/s, one queue each, 2000-cell buffer of 80 B cells. Queues 0 and 1: long "
      "flows at 2 Gbit/s for 20 ms (saturated). Queue 2: a 400-frame incast at 10 Gbit/s at "
      "t = 10 ms. Queue 3: idle.";
  s.setup.buffer.capacity_cells = 2000;
  s.setup.buffer.ports.assign(4, buffer::PortSpec{});
  s.setup.port_rate_bps.assign(4, 1'000'000'000ull);
  s.queue_labels = {"long-0", "long-1", "incast", "idle"};
  s.end_ns = 20 * kMs;
  const uint64_t long_frames = 20 * kMs / (1500 * 8 / 2);  // 2 Gbit/s: one frame every 6 us
  constant_rate(s.arrivals, 0, 0, 2'000'000'000ull, 1500, long_frames);
  constant_rate(s.arrivals, 1, 500, 2'000'000'000ull, 1500, long_frames);
  constant_rate(s.arrivals, 2, 10 * kMs, 10'000'000'000ull, 1500, 400);
  std::stable_sort(
      s.arrivals.begin(), s.arrivals.end(),
      [](const ReplayArrival& a, const ReplayArrival& b) { return a.time_ns < b.time_ns; });
  return s;
}

std::vector<std::string> scenario_names() {
  return {"burst"};
}

ReplayScenario make_scenario(const std::string& name) {
  if (name == "burst") return burst_scenario();
  std::string known;
  for (const auto& n : scenario_names())
    known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown scenario '" + name + "' (known scenarios: " + known + ")");
}

}  // namespace sharebuf::datapath

// Built-in arrival scenarios for sharebuf-replay, deterministic and self-describing.
#pragma once

#include <string>
#include <vector>

#include "datapath/replay.h"

namespace sharebuf::datapath {

struct ReplayScenario {
  std::string name;
  std::string description;
  ReplaySetup setup;
  std::vector<std::string> queue_labels;  // one per flat queue, for reports
  std::vector<ReplayArrival> arrivals;
  uint64_t end_ns = 0;
};

// "burst": four 1 Gbit/s ports with one queue each sharing a 2000-cell buffer. Ports 0 and 1
// carry long flows at twice their line rate for the whole 20 ms (they saturate); at 10 ms a
// 20-to-1 incast of 400 x 1500 B frames hits port 2 at 10 Gbit/s; port 3 stays idle.
ReplayScenario burst_scenario();

std::vector<std::string> scenario_names();
// Throws std::invalid_argument naming the known scenarios.
ReplayScenario make_scenario(const std::string& name);

}  // namespace sharebuf::datapath

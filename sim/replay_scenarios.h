// Built-in arrival generators for sharebuf-replay: deterministic for a seed, self-describing.
//   burst        long flows saturate two ports while a 20-to-1 incast hits a third
//   poisson      Poisson packet arrivals on every port at a given load
//   websearch    web-search flows (DCTCP's flow-size CDF) with Poisson arrivals at a given load,
//                plus partition-aggregate incast queries
//   credence-fig3, credence-fig4   the adversarial patterns of Credence's Figures 3 and 4
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/flow_size_cdf.h"
#include "sim/replay.h"

namespace sharebuf::sim {

struct ScenarioOptions {
  uint64_t seed = 1;
  double load = 0.6;            // poisson, websearch: offered load per port (fraction of line rate)
  double duration_ms = 0;       // 0 = the scenario's default
  uint32_t ports = 8;           // poisson, websearch, credence-*
  uint32_t buffer_cells = 0;    // 0 = the scenario's default
  double query_rate = 200;      // websearch: incast queries per second (whole switch)
  uint32_t fan_in = 16;         // websearch: senders per query
  double query_fraction = 0.5;  // websearch: a query's response as a fraction of the buffer
  std::string cdf_path;  // websearch: flow-size CDF (default data/websearch-flow-size-cdf.txt)
};

struct ReplayScenario {
  std::string name;
  std::string description;
  model::SwitchConfig config;  // the switch (one queue per port unless the scenario says)
  std::vector<std::string> queue_labels;  // one per flat queue, for reports
  std::vector<ReplayArrival> arrivals;
  uint64_t end_ns = 0;
};

struct ScenarioInfo {
  std::string name;
  std::string summary;
};
std::vector<ScenarioInfo> scenarios();
// Throws std::invalid_argument naming the known scenarios, or std::runtime_error for a bad CDF.
ReplayScenario make_scenario(const std::string& name, const ScenarioOptions& options = {});

}  // namespace sharebuf::sim

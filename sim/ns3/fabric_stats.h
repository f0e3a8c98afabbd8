// FabricStats: what every switch of a Fabric did (C++17, ns-3): its occupancy sampled every
// sample interval (mean, p99, p99.99, max of the total, in cells and as a share of its buffer;
// optionally every queue's occupancy and threshold into a CSV), and its counters (received,
// admitted, transmitted, drops by reason, summed over its queues, and drops by reason per queue
// index: with classes in queues of their own, drops by class).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "sim/ns3/fabric.h"
#include "sim/ns3/scenario.h"

namespace sharebuf::sim {

class FabricStats {
 public:
  // `csv`: if not empty, the samples go there: time_s,switch,total_cells, or with
  // [run] sample_queues time_s,switch,port,queue,cells,threshold.
  FabricStats(const Scenario& scenario, const Fabric& fabric, const std::string& csv);
  void Start();
  // Per switch, as a JSON array.
  std::string SummaryJson() const;

 private:
  void Sample();

  const Scenario& s_;
  const Fabric& fabric_;
  std::vector<std::vector<uint32_t>> totals_;  // per switch, per sample
  std::ofstream csv_;
};

}  // namespace sharebuf::sim

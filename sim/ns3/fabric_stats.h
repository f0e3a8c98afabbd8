// FabricStats: what every switch of a Fabric did (C++17, ns-3): its occupancy sampled every
// sample interval (mean, p99, p99.99, max of the total, in cells and as a share of its buffer;
// optionally every queue's occupancy and threshold into a CSV), and its counters (received,
// admitted, transmitted, drops by reason, summed over its queues, and drops by reason per queue
// index: with classes in queues of their own, drops by class).
//
// Each rank of a split run samples its own switches: Local() is what it has, Merge() on one rank
// puts every rank's together in switch order, the same JSON and CSV as one process writes.
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
  // [run] sample_queues time_s,switch,port,queue,cells,threshold. A one-rank run writes it as it
  // goes; with several ranks each keeps its rows and Merge writes them.
  FabricStats(const Scenario& scenario, const Fabric& fabric, const std::string& csv);
  void Start();
  // This rank's switches: their summaries and any CSV rows kept, as text for Merge.
  std::string Local() const;
  // Every rank's Local() (this one's among them): the summaries of all switches in order, as a
  // JSON array; writes the kept CSV rows in the one-process order.
  std::string Merge(const std::vector<std::string>& locals);

 private:
  void Sample();
  std::string SwitchJson(size_t i) const;

  const Scenario& s_;
  const Fabric& fabric_;
  std::string csv_path_;
  std::vector<std::vector<uint32_t>> totals_;   // per switch, per sample
  std::ofstream csv_;                           // one rank: the rows as they come
  bool keep_rows_ = false;                      // several ranks: the rows kept until Merge
  std::vector<std::vector<std::string>> rows_;  // per switch, per sample
};

}  // namespace sharebuf::sim

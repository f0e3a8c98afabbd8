#include "sim/ns3/fabric_stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ns3/simulator.h"

namespace sharebuf::sim {

namespace {

const char* CsvHeader(bool queues) {
  return queues ? "time_s,switch,port,queue,cells,threshold\n" : "time_s,switch,total_cells\n";
}

}  // namespace

FabricStats::FabricStats(const Scenario& scenario, const Fabric& fabric, const std::string& csv)
    : s_(scenario),
      fabric_(fabric),
      csv_path_(csv),
      totals_(fabric.switches().size()),
      rows_(fabric.switches().size()) {
  if (csv.empty()) return;
  if (fabric.partition().ranks() > 1) {
    keep_rows_ = true;
    return;
  }
  csv_.open(csv);
  if (!csv_) throw std::runtime_error("cannot write " + csv);
  csv_ << CsvHeader(s_.sample_queues);
}

void FabricStats::Start() {
  ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<int64_t>(s_.sample_ns)),
                           &FabricStats::Sample, this);
}

void FabricStats::Sample() {
  const double t = ns3::Simulator::Now().GetSeconds();
  const uint64_t now = static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds());
  const std::vector<FabricSwitch>& sws = fabric_.switches();
  for (size_t i = 0; i < sws.size(); ++i) {
    if (!sws[i].local()) continue;
    const SwitchFacade& f = sws[i].sw->GetFacade();
    totals_[i].push_back(f.total_cells());
    if (!csv_.is_open() && !keep_rows_) continue;
    std::ostringstream rows;
    if (!s_.sample_queues) {
      rows << t << ',' << sws[i].name << ',' << f.total_cells() << '\n';
    } else {
      for (uint32_t p = 0; p < f.ports(); ++p) {
        for (uint32_t k = 0; k < f.queues(p); ++k) {
          rows << t << ',' << sws[i].name << ',' << p << ',' << k << ',' << f.queue_cells(p, k)
               << ',' << f.threshold_cells(p, k, now) << '\n';
        }
      }
    }
    if (keep_rows_) {
      rows_[i].push_back(rows.str());
    } else {
      csv_ << rows.str();
    }
  }
  ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<int64_t>(s_.sample_ns)),
                           &FabricStats::Sample, this);
}

std::string FabricStats::Local() const {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < fabric_.switches().size(); ++i) {
    if (!fabric_.switches()[i].local()) continue;
    out.push_back(
        {{"index", i}, {"summary", nlohmann::json::parse(SwitchJson(i))}, {"rows", rows_[i]}});
  }
  return out.dump();
}

std::string FabricStats::Merge(const std::vector<std::string>& locals) {
  const size_t n = fabric_.switches().size();
  std::vector<nlohmann::json> summary(n);
  std::vector<std::vector<std::string>> rows(n);
  for (const std::string& text : locals) {
    for (nlohmann::json& sw : nlohmann::json::parse(text)) {
      const size_t i = sw["index"].get<size_t>();
      if (i >= n) throw std::runtime_error("bad switch statistics from a rank");
      summary[i] = std::move(sw["summary"]);
      rows[i] = sw["rows"].get<std::vector<std::string>>();
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    if (summary[i].is_null()) throw std::runtime_error("no rank sent switch " + std::to_string(i));
    out.push_back(std::move(summary[i]));
  }
  if (keep_rows_) {
    // Sample by sample, each switch's rows in switch order, as one process writes them.
    std::ofstream csv(csv_path_);
    csv << CsvHeader(s_.sample_queues);
    const size_t samples = rows.empty() ? 0 : rows[0].size();
    for (size_t k = 0; k < samples; ++k) {
      for (size_t i = 0; i < n; ++i) {
        if (k < rows[i].size()) csv << rows[i][k];
      }
    }
    if (!csv) throw std::runtime_error("cannot write " + csv_path_);
  }
  return out.dump();
}

std::string FabricStats::SwitchJson(size_t i) const {
  const std::vector<FabricSwitch>& sws = fabric_.switches();
  const SwitchFacade& f = sws[i].sw->GetFacade();
  std::vector<uint32_t> v = totals_[i];
  std::sort(v.begin(), v.end());
  auto pct = [&](double p) -> uint32_t {
    if (v.empty()) return 0;
    const size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  double sum = 0;
  for (uint32_t x : v)
    sum += x;
  const double cap = f.capacity_cells();
  // Counters summed over the switch's queues, and drops by queue index (the same index on
  // every port: with classes in queues, drops by class).
  uint64_t received = 0, admitted = 0, transmitted = 0, marked = 0;
  nlohmann::json drops = nlohmann::json::object();
  nlohmann::json by_queue = nlohmann::json::object();
  // Per port, in the switch's port order (what a live sharebufd's stats file has per interface):
  // where in the fabric the drops are. peak_cells is the port's largest queue peak (the port's
  // own when it has one queue, as the fabric scenarios give it).
  nlohmann::json ports = nlohmann::json::array();
  for (const nlohmann::json& q : nlohmann::json::parse(f.counters_json())) {
    if (ports.empty() || ports.back()["port"] != q["port"])
      ports.push_back({{"port", q["port"]},
                       {"transmitted", uint64_t{0}},
                       {"ecn_marked", uint64_t{0}},
                       {"dropped", uint64_t{0}},
                       {"peak_cells", uint64_t{0}}});
    nlohmann::json& port = ports.back();
    port["transmitted"] = port["transmitted"].get<uint64_t>() + q["transmitted"].get<uint64_t>();
    port["ecn_marked"] = port["ecn_marked"].get<uint64_t>() + q["ecn_marked"].get<uint64_t>();
    for (const auto& [reason, n] : q["dropped"].items())
      port["dropped"] = port["dropped"].get<uint64_t>() + n.get<uint64_t>();
    port["peak_cells"] =
        std::max(port["peak_cells"].get<uint64_t>(), q["peak_cells"].get<uint64_t>());
    received += q["received"].get<uint64_t>();
    admitted += q["admitted"].get<uint64_t>();
    transmitted += q["transmitted"].get<uint64_t>();
    marked += q["ecn_marked"].get<uint64_t>();
    nlohmann::json& k = by_queue[std::to_string(q["queue"].get<uint32_t>())];
    if (!k.is_object()) k = nlohmann::json::object();
    for (const auto& [reason, n] : q["dropped"].items()) {
      drops[reason] = drops.value(reason, uint64_t{0}) + n.get<uint64_t>();
      if (n.get<uint64_t>() != 0) k[reason] = k.value(reason, uint64_t{0}) + n.get<uint64_t>();
    }
    if (k.empty()) by_queue.erase(std::to_string(q["queue"].get<uint32_t>()));
  }
  // What ns-3's own accounting of each port's queue disc says (QueueDisc::GetStats): cut copies
  // count as received where they are queued, so received = dropped before enqueue + enqueued.
  for (size_t p = 0; p < ports.size(); ++p) {
    SharebufQueueDisc* disc = sws[i].sw->GetPort(static_cast<uint32_t>(p));
    if (disc == nullptr) continue;
    const ns3::QueueDisc::Stats& st = disc->GetStats();
    ports[p]["queue_disc"] = {{"received", st.nTotalReceivedPackets},
                              {"dropped_before_enqueue", st.nTotalDroppedPacketsBeforeEnqueue},
                              {"enqueued", st.nTotalEnqueuedPackets},
                              {"received_bytes", st.nTotalReceivedBytes},
                              {"dropped_before_enqueue_bytes", st.nTotalDroppedBytesBeforeEnqueue},
                              {"enqueued_bytes", st.nTotalEnqueuedBytes}};
  }
  const nlohmann::json out = {
      {"name", sws[i].name},
      {"role", sws[i].role},
      {"policy", f.policy_name()},
      {"buffer_cells", f.capacity_cells()},
      {"cell_bytes", f.cell_bytes()},
      {"occupancy",
       {{"samples", v.size()},
        {"mean_cells", v.empty() ? 0.0 : sum / static_cast<double>(v.size())},
        {"p99_cells", pct(99)},
        {"p9999_cells", pct(99.99)},
        {"max_cells", v.empty() ? 0 : v.back()},
        {"p99_share", cap > 0 ? pct(99) / cap : 0.0},
        {"p9999_share", cap > 0 ? pct(99.99) / cap : 0.0}}},
      {"received", received},
      {"admitted", admitted},
      {"transmitted", transmitted},
      {"ecn_marked", marked},
      {"dropped", drops},
      {"dropped_by_queue", by_queue},
      {"ports", ports}};
  return out.dump();
}

}  // namespace sharebuf::sim

#include "mgmt/switch_report.h"

#include <cstdio>

namespace sharebuf::mgmt {
std::string switch_stats_table(const nlohmann::json& s) {
  std::string out;
  char line[256];
  std::snprintf(
      line, sizeof line, "policy %s; buffer %u cells of %u B; peak %u cells\n",
      s["policy"]["name"].get<std::string>().c_str(), s["buffer"]["capacity_cells"].get<uint32_t>(),
      s["buffer"]["cell_bytes"].get<uint32_t>(), s["buffer"]["peak_cells"].get<uint32_t>());
  out += line;
  std::snprintf(line, sizeof line, "%-12s %9s %9s %9s %10s %10s %8s %8s %7s %8s\n", "port", "rx",
                "tx", "malformed", "ring_drops", "oversize", "filtered", "", "", "");
  out += line;
  for (const auto& p : s["ports"]) {
    std::snprintf(line, sizeof line, "%-12s %9lu %9lu %9lu %10lu %10lu %8lu\n",
                  p["interface"].get<std::string>().c_str(), p["rx_frames"].get<uint64_t>(),
                  p["tx_frames"].get<uint64_t>(), p["malformed_total"].get<uint64_t>(),
                  p["ring_drops"].get<uint64_t>(), p["oversize"].get<uint64_t>(),
                  p["filtered"].get<uint64_t>());
    out += line;
  }
  std::snprintf(line, sizeof line, "%-14s %9s %9s %11s %9s %9s %9s %7s %8s %9s\n", "queue",
                "received", "admitted", "transmitted", "queued", "drop:thr", "drop:pool", "ecn",
                "peak", "threshold");
  out += line;
  for (const auto& p : s["ports"]) {
    for (const auto& q : p["queues"]) {
      const std::string name =
          p["interface"].get<std::string>() + "/" + std::to_string(q["queue"].get<uint32_t>());
      std::snprintf(line, sizeof line, "%-14s %9lu %9lu %11lu %9lu %9lu %9lu %7lu %8u %9u\n",
                    name.c_str(), q["received"].get<uint64_t>(), q["admitted"].get<uint64_t>(),
                    q["transmitted"].get<uint64_t>(), q["queued"].get<uint64_t>(),
                    q["dropped"]["threshold"].get<uint64_t>(),
                    q["dropped"]["pool_full"].get<uint64_t>(), q["ecn_marked"].get<uint64_t>(),
                    q["peak_cells"].get<uint32_t>(), q["threshold_cells"].get<uint32_t>());
      out += line;
    }
  }
  return out;
}

}  // namespace sharebuf::mgmt

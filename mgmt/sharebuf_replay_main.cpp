// sharebuf-replay: replays arrivals through the shared buffer under one or more policies with a
// simulated clock and prints what each policy admitted and dropped per queue.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "datapath/replay.h"
#include "datapath/replay_scenarios.h"
#include "policies/registry.h"

namespace {

using sharebuf::datapath::ReplayResult;
using sharebuf::datapath::ReplayScenario;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

// "--set dt.alpha=2" -> params["dt"]["alpha"] = 2. The value is JSON if it parses, else a string.
void apply_set(std::map<std::string, sharebuf::policies::Params>& params, const std::string& s) {
  const auto dot = s.find('.');
  const auto eq = s.find('=');
  if (dot == std::string::npos || eq == std::string::npos || dot > eq) {
    throw CLI::ValidationError("--set", "expected POLICY.KEY=VALUE, got '" + s + "'");
  }
  const std::string policy = s.substr(0, dot);
  const std::string key = s.substr(dot + 1, eq - dot - 1);
  const std::string text = s.substr(eq + 1);
  nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;
  auto& p = params[policy];
  p.origin = "--set";
  p.values[key] = value;
}

void print_table(const ReplayScenario& sc, const std::vector<ReplayResult>& results) {
  std::printf("%-8s %-8s %9s %9s %12s %10s %10s %10s %11s\n", "policy", "queue", "arrivals",
              "enqueued", "transmitted", "drop:thr", "drop:pool", "drop:push", "peak_cells");
  for (const ReplayResult& r : results) {
    for (size_t q = 0; q < r.queues.size(); ++q) {
      const auto& qr = r.queues[q];
      using sharebuf::buffer::DropReason;
      auto dropped = [&](DropReason d) { return qr.dropped[static_cast<size_t>(d)]; };
      std::printf("%-8s %-8s %9lu %9lu %12lu %10lu %10lu %10lu %11u\n", r.policy.c_str(),
                  q < sc.queue_labels.size() ? sc.queue_labels[q].c_str() : "?", qr.arrivals,
                  qr.enqueued, qr.transmitted, dropped(DropReason::kThreshold),
                  dropped(DropReason::kPoolFull), dropped(DropReason::kPushedOut), qr.peak_cells);
    }
    std::printf("%-8s peak total %u of %u cells; accounting identities: %s\n\n", r.policy.c_str(),
                r.peak_total_cells, sc.setup.buffer.capacity_cells,
                r.accounting_errors.empty() ? "all hold" : "VIOLATED");
    for (const auto& e : r.accounting_errors)
      std::printf("  violated: %s\n", e.c_str());
  }
}

nlohmann::json to_json(const ReplayScenario& sc, const std::vector<ReplayResult>& results) {
  nlohmann::json out = {{"scenario", sc.name}, {"description", sc.description}};
  for (const ReplayResult& r : results) {
    nlohmann::json queues = nlohmann::json::array();
    for (size_t q = 0; q < r.queues.size(); ++q) {
      const auto& qr = r.queues[q];
      nlohmann::json drops = nlohmann::json::object();
      for (size_t i = 1; i < sharebuf::buffer::kNumDropReasons; ++i) {
        drops[std::string(sharebuf::buffer::kDropReasonNames[i])] = qr.dropped[i];
      }
      queues.push_back({{"queue", q},
                        {"label", q < sc.queue_labels.size() ? sc.queue_labels[q] : ""},
                        {"arrivals", qr.arrivals},
                        {"enqueued", qr.enqueued},
                        {"transmitted", qr.transmitted},
                        {"dropped", drops},
                        {"peak_cells", qr.peak_cells}});
    }
    out["results"].push_back({{"policy", r.policy},
                              {"queues", queues},
                              {"peak_total_cells", r.peak_total_cells},
                              {"accounting_errors", r.accounting_errors}});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sharebuf-replay: replay arrivals through sharebuf's shared buffer under several "
      "policies (simulated clock, deterministic)"};
  std::string scenario = "burst";
  std::string policies = "cs,static,dt";
  std::vector<std::string> sets;
  bool json = false;
  bool list = false;
  app.add_option("--scenario", scenario, "built-in arrival scenario")->capture_default_str();
  app.add_option("--policies", policies, "comma-separated policies to compare")
      ->capture_default_str();
  app.add_option("--set", sets, "policy parameter, POLICY.KEY=VALUE (VALUE in JSON), repeatable");
  app.add_flag("--json", json, "print the results as JSON");
  app.add_flag("--list", list, "list scenarios and policies with their parameters, then exit");
  CLI11_PARSE(app, argc, argv);

  try {
    if (list) {
      std::cout << "scenarios:\n";
      for (const auto& n : sharebuf::datapath::scenario_names())
        std::cout << "  " << n << "\n";
      std::cout << "policies:\n";
      for (const auto& p : sharebuf::policies::builtin_policies()) {
        std::cout << "  " << p.name << " — " << p.summary << "\n";
        for (const auto& s : p.params) {
          std::cout << "      " << s.name << " (" << sharebuf::policies::to_string(s.type)
                    << ", default " << s.default_value << "): " << s.help << "\n";
        }
      }
      return 0;
    }
    std::map<std::string, sharebuf::policies::Params> params;
    for (const auto& s : sets)
      apply_set(params, s);
    const std::vector<std::string> names = split(policies, ',');
    if (names.empty()) throw std::invalid_argument("--policies names no policy");
    for (const auto& [name, p] : params) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        throw std::invalid_argument("--set names policy '" + name +
                                    "', which is not in --policies");
      }
    }
    const ReplayScenario sc = sharebuf::datapath::make_scenario(scenario);
    std::vector<ReplayResult> results;
    for (const std::string& name : names) {
      results.push_back(
          sharebuf::datapath::run_replay(sc.setup, name, params[name], sc.arrivals, sc.end_ns));
    }
    if (json) {
      std::cout << to_json(sc, results).dump(2) << "\n";
    } else {
      std::printf("scenario %s: %s\n\n", sc.name.c_str(), sc.description.c_str());
      print_table(sc, results);
    }
    for (const ReplayResult& r : results) {
      if (!r.accounting_errors.empty()) return 3;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharebuf-replay: %s\n", e.what());
    return 2;
  }
  return 0;
}

// sharebuf-replay: replays arrivals — a built-in generator, a CSV or pcap files — through the
// shared buffer under one or more policies with a simulated clock, and reports what each policy
// transmitted and dropped; optionally an occupancy/threshold timeline and LQD-labelled traces
// for training Credence's oracle. Deterministic: same input and seed, same bytes out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/version.h"
#include "config/overrides.h"
#include "config/switch_config_reader.h"
#include "config/switch_config_writer.h"
#include "policies/registry.h"
#include "sim/replay.h"
#include "sim/replay_inputs.h"
#include "sim/replay_scenarios.h"

namespace {

using sharebuf::sim::ReplayPolicy;
using sharebuf::sim::ReplayResult;
using sharebuf::sim::ReplayScenario;
using DropReason = sharebuf::buffer::DropReason;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

// "NAME", "NAME:key=value,key=value" or "LABEL=NAME:key=value,...".
ReplayPolicy parse_policy_spec(const std::string& spec) {
  ReplayPolicy p;
  const auto colon = spec.find(':');
  std::string head = spec.substr(0, colon);
  if (const auto eq = head.find('='); eq != std::string::npos) {
    p.label = head.substr(0, eq);
    head = head.substr(eq + 1);
  }
  p.name = head;
  p.params.origin = "--policy " + spec;
  if (colon != std::string::npos) {
    for (const std::string& kv : split(spec.substr(colon + 1), ',')) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw CLI::ValidationError("--policy", "expected key=value after ':', got '" + kv + "'");
      // The value as an override's (config/overrides.h): TOML, else a string.
      p.params.values[kv.substr(0, eq)] = sharebuf::config::override_value(kv.substr(eq + 1));
    }
    if (p.label.empty()) p.label = spec;
  }
  if (p.label.empty()) p.label = p.name;
  return p;
}

uint64_t dropped(const ReplayResult& r, DropReason d) {
  uint64_t n = 0;
  for (const auto& q : r.queues)
    n += q.dropped[static_cast<size_t>(d)];
  return n;
}

void print_summary(const std::vector<ReplayResult>& results, uint32_t capacity) {
  std::printf("%-44s %9s %12s %8s %10s %10s %10s %10s %9s %6s\n", "policy", "arrivals",
              "transmitted", "tx %", "threshold", "pool_full", "predicted", "pushed_out",
              "reclaimed", "peak%");
  for (const ReplayResult& r : results) {
    std::printf("%-44s %9lu %12lu %7.2f%% %10lu %10lu %10lu %10lu %9lu %5.0f%%\n", r.policy.c_str(),
                r.arrivals, r.transmitted,
                r.arrivals
                    ? 100.0 * static_cast<double>(r.transmitted) / static_cast<double>(r.arrivals)
                    : 0.0,
                dropped(r, DropReason::kThreshold), dropped(r, DropReason::kPoolFull),
                dropped(r, DropReason::kPrediction), dropped(r, DropReason::kPushedOut),
                dropped(r, DropReason::kReclaimed), 100.0 * r.peak_total_cells / capacity);
    for (const auto& e : r.accounting_errors)
      std::printf("  accounting VIOLATED: %s\n", e.c_str());
  }
}

void print_queues(const std::vector<std::string>& labels,
                  const std::vector<ReplayResult>& results) {
  std::printf("\n%-24s %-8s %9s %9s %12s %10s %10s %10s %10s %9s %11s %9s\n", "policy", "queue",
              "arrivals", "admitted", "transmitted", "threshold", "pool_full", "predicted",
              "pushed_out", "reclaimed", "peak cells", "trimmed");
  for (const ReplayResult& r : results) {
    for (size_t q = 0; q < r.queues.size(); ++q) {
      const auto& qr = r.queues[q];
      auto d = [&](DropReason x) { return qr.dropped[static_cast<size_t>(x)]; };
      std::printf("%-24s %-8s %9lu %9lu %12lu %10lu %10lu %10lu %10lu %9lu %11u %9lu\n",
                  r.policy.substr(0, 24).c_str(), q < labels.size() ? labels[q].c_str() : "?",
                  qr.arrivals, qr.enqueued, qr.transmitted, d(DropReason::kThreshold),
                  d(DropReason::kPoolFull), d(DropReason::kPrediction), d(DropReason::kPushedOut),
                  d(DropReason::kReclaimed), qr.peak_cells, qr.trimmed + qr.bounced);
    }
  }
}

nlohmann::json to_json(const std::string& input, const std::string& description,
                       const std::vector<std::string>& labels,
                       const std::vector<ReplayResult>& results, bool with_state) {
  nlohmann::json out = {{"input", input}, {"description", description}};
  out["results"] = nlohmann::json::array();
  for (const ReplayResult& r : results) {
    nlohmann::json queues = nlohmann::json::array();
    for (size_t q = 0; q < r.queues.size(); ++q) {
      const auto& qr = r.queues[q];
      nlohmann::json drops = nlohmann::json::object();
      nlohmann::json drop_cells = nlohmann::json::object();
      for (size_t i = 1; i < sharebuf::buffer::kNumDropReasons; ++i) {
        drops[std::string(sharebuf::buffer::kDropReasonNames[i])] = qr.dropped[i];
        drop_cells[std::string(sharebuf::buffer::kDropReasonNames[i])] = qr.dropped_cells[i];
      }
      queues.push_back({{"queue", q},
                        {"label", q < labels.size() ? labels[q] : ""},
                        {"arrivals", qr.arrivals},
                        {"enqueued", qr.enqueued},
                        {"transmitted", qr.transmitted},
                        {"transmitted_cells", qr.transmitted_cells},
                        {"dropped", drops},
                        {"dropped_cells", drop_cells},
                        {"peak_cells", qr.peak_cells},
                        {"trimmed", qr.trimmed},
                        {"bounced", qr.bounced},
                        {"deflected", qr.deflected},
                        {"trimmed_newest", qr.trimmed_newest},
                        {"trimmed_dropped", qr.trimmed_dropped},
                        {"header_reserve", qr.header_reserve}});
    }
    out["results"].push_back({{"policy", r.policy},
                              {"params", r.params},
                              {"arrivals", r.arrivals},
                              {"transmitted", r.transmitted},
                              {"probe_charged_bytes", r.probe_charged_bytes},
                              {"queues", queues},
                              {"peak_total_cells", r.peak_total_cells},
                              {"accounting_errors", r.accounting_errors}});
    if (!r.tofino.is_null()) out["results"].back()["tofino_approx"] = r.tofino;
    if (with_state) out["results"].back()["state"] = r.state;
  }
  return out;
}

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  return f;
}

// Everything the command line sets.
struct Options {
  std::string scenario;
  std::string csv;
  std::vector<std::string> pcaps;
  std::string config_path;
  std::string policies_list;
  std::vector<std::string> specs;
  std::vector<std::string> sets;
  sharebuf::sim::ScenarioOptions so;
  double end_ms = 0;
  std::string timeline_path;
  double timeline_us = 100;
  std::string trace_path;
  double base_rtt_us = 10;
  std::string order = "departures-first";
  std::string view;
  double probe_interval_us = -1;
  double probe_delay_us = -1;
  std::string fates_path;
  std::string departures_path;
  std::string trim_notes_path;
  std::string effective_config_path;
  bool json = false;
  bool with_state = false;
  bool list = false;
  bool per_queue = false;
  bool params_markdown = false;
  std::string params_markdown_of;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--scenario", o.scenario, "built-in generator (see --list); default burst");
  app.add_option(
      "--csv", o.csv,
      "arrivals CSV: header time_ns,port,queue,bytes[,class,in_port,flow_hash,first_bdp] "
      "(needs --config); "
      "without a class column a frame takes its queue's class (the first [[classes]] "
      "entry mapped to that queue)");
  app.add_option("--pcap", o.pcaps,
                 "pcap file, FILE or FILE@PORT (the port its frames arrived on, for MAC learning); "
                 "repeatable, merged by time (needs --config)");
  app.add_option("--config", o.config_path,
                 "sharebufd TOML: ports, rates, queues, schedulers, classes, static MACs, buffer");
  app.add_option("--policies", o.policies_list,
                 "comma-separated policy names (default cs,dt,lqd); \"config\": the "
                 "configuration's [policy] with its parameters; a name equal to the "
                 "configuration's [policy] name runs with its parameters too (the output says so)");
  app.add_option("--policy", o.specs,
                 "a policy with parameters: NAME:key=value,... or LABEL=NAME:...; repeatable");
  app.add_option("--set", o.sets,
                 "a setting over the switch's configuration (the --config file, or a built-in "
                 "scenario's switch): SECTION.KEY=VALUE as in the TOML file, e.g. policy.alpha=2, "
                 "buffer.view=probe, ports.p2.rate=50Mbit, classes.data.overflow=trim; "
                 "repeatable, applied in order (config/overrides.h)");
  app.add_option("--effective-config", o.effective_config_path,
                 "write the switch as replayed (its TOML, loadable by --config and sharebufd), "
                 "with the replayed policies and their parameters");
  app.add_option("--seed", o.so.seed, "generator seed")->capture_default_str();
  app.add_option("--load", o.so.load, "poisson/websearch: offered load per port")
      ->capture_default_str();
  app.add_option("--duration-ms", o.so.duration_ms, "generator duration (default: the scenario's)");
  app.add_option("--ports", o.so.ports, "poisson/websearch/credence-*: ports")
      ->capture_default_str();
  app.add_option("--buffer-cells", o.so.buffer_cells,
                 "generator buffer size B (default: the scenario's)");
  app.add_option("--query-rate", o.so.query_rate, "websearch: incast queries per second")
      ->capture_default_str();
  app.add_option("--fan-in", o.so.fan_in, "websearch: senders per query")->capture_default_str();
  app.add_option("--cdf", o.so.cdf_path,
                 "websearch: flow-size CDF file (default data/websearch-flow-size-cdf.txt)");
  app.add_option("--end-ms", o.end_ms,
                 "stop the simulation here (CSV/pcap default: last arrival + 10 ms)");
  app.add_option("--timeline", o.timeline_path,
                 "write an occupancy/threshold timeline CSV (plot with tools/plot_watch.py)");
  app.add_option("--timeline-interval-us", o.timeline_us, "timeline sample interval")
      ->capture_default_str();
  app.add_option(
      "--lqd-trace", o.trace_path,
      "write, for every arrival under lqd, Credence's features and LQD's label (training data)");
  app.add_option("--base-rtt-us", o.base_rtt_us, "time constant of the trace features' EWMAs")
      ->capture_default_str();
  app.add_option("--order", o.order,
                 "within one instant: departures-first (a port that frees cells at t admits "
                 "with them at t) or arrivals-first (Credence's slotted model)")
      ->check(CLI::IsMember({"departures-first", "arrivals-first"}))
      ->capture_default_str();
  app.add_option("--view", o.view,
                 "how admission reads the buffer: exact, or probe (registers taken every probe "
                 "interval, seen a probe delay later); --set buffer.view=... (default: the "
                 "config's [buffer] view)")
      ->check(CLI::IsMember({"exact", "probe"}));
  app.add_option("--probe-interval-us", o.probe_interval_us,
                 "probe interval, 1 to 1000000 us: --set buffer.probe_interval=... (default: "
                 "the config's, else 10)");
  app.add_option("--probe-delay-us", o.probe_delay_us,
                 "probe delay, us: --set buffer.probe_delay=... (default: the config's, else 0)");
  app.add_option("--fates", o.fates_path,
                 "write every arrival's fate under each policy: CSV seq,POLICY,... with 1 for "
                 "dropped or later pushed out, 0 for transmitted or still queued");
  app.add_option("--departures", o.departures_path,
                 "write every transmission under each policy: CSV policy,t_ns,queue,arrival_ns,"
                 "bytes,cut (arrival_ns: the carried frame's arrival, a cut copy's original's; "
                 "queue: flat id)");
  app.add_option("--trim-notes", o.trim_notes_path,
                 "write every congestion notification of trimming's Tofino approximation: CSV "
                 "policy,t_ns,port (when it reaches the pipelines)");
  app.add_flag("--json", o.json, "print the results as JSON");
  app.add_flag("--state", o.with_state,
               "with --json: each policy's final state as policy.get shows it (thresholds, "
               "Smartbuf's map and burst log, Protean's gradients, ...)");
  app.add_flag("--per-queue", o.per_queue, "also print a table per queue");
  app.add_flag("--list", o.list, "list generators and policies with their parameters, then exit");
  app.add_flag("--params-markdown", o.params_markdown,
               "print the policies' parameter table as Markdown (docs/policies.md), then exit");
  app.add_option("--params-markdown-of", o.params_markdown_of,
                 "print one policy's parameter table as Markdown (docs/policies/NAME.md), then "
                 "exit");
}

void print_list() {
  std::cout << "generators (--scenario):\n";
  for (const auto& s : sharebuf::sim::scenarios())
    std::cout << "  " << s.name << " — " << s.summary << "\n";
  std::cout << "policies:\n";
  for (const auto& p : sharebuf::policies::builtin_policies()) {
    std::cout << "  " << p.name << " — " << p.summary << "\n";
    for (const auto& s : p.params)
      std::cout << "      " << s.name << " (" << sharebuf::policies::to_string(s.type)
                << ", default " << s.default_value << ", " << sharebuf::policies::range_text(s)
                << "): " << s.help << "\n";
  }
}

// --policies, then --policy.
std::vector<ReplayPolicy> parse_policies(Options& o) {
  std::vector<ReplayPolicy> policies;
  if (o.policies_list.empty() && o.specs.empty()) o.policies_list = "cs,dt,lqd";
  for (const std::string& n : split(o.policies_list, ','))
    policies.push_back(parse_policy_spec(n));
  for (const std::string& s : o.specs)
    policies.push_back(parse_policy_spec(s));
  return policies;
}

// The switch's configuration with the --set overrides over it: `root` is the file's (or a
// scenario's switch written out), `source` names it in errors. A --set whose first key is a
// policy's name is the replay's old per-policy form: said so.
sharebuf::model::SwitchConfig with_overrides(toml::table root, const std::string& source,
                                             const std::vector<std::string>& sets,
                                             std::vector<std::string>& notes) {
  for (const std::string& s : sets) {
    const std::string first = s.substr(0, s.find_first_of(".="));
    if (sharebuf::policies::find_policy(first) != nullptr)
      throw std::invalid_argument(
          "--set " + s + ": '" + first +
          "' is a policy, not a section of the configuration: --set policy.KEY=VALUE sets the "
          "configuration's [policy] (replayed as --policies config), --policy " +
          first + ":KEY=VALUE one replayed policy");
    std::string replaced;
    sharebuf::config::apply_override(root, s, "--set", &replaced);
    if (!replaced.empty())
      notes.push_back("--set " + s + " replaces " + source + "'s value " + replaced);
  }
  sharebuf::model::SwitchConfig cfg = sharebuf::config::read_switch_config(root, source);
  sharebuf::config::validate_switch_config(cfg);
  return cfg;
}

// What replays: "config" (and a policy named as the configuration's [policy]) takes the
// configuration's parameters under the ones given; every choice that puts the command line over
// the configuration is said in `notes`, never silently.
void resolve_policies(std::vector<ReplayPolicy>& policies, const sharebuf::model::SwitchConfig& cfg,
                      bool stated, bool policy_set, std::vector<std::string>& notes) {
  bool uses_config = false;
  for (ReplayPolicy& p : policies) {
    const bool named = p.name == "config";
    if (!named && (!stated || p.name != cfg.policy)) continue;
    sharebuf::policies::Params given = std::move(p.params);
    p.params = cfg.policy_params;
    p.params.values.update(given.values);
    if (named) {
      p.name = cfg.policy;
      if (p.label == "config") p.label = p.name;
    } else {
      notes.push_back("policy " + p.label + " runs with the configuration's [policy] parameters " +
                      cfg.policy_params.values.dump() +
                      (given.values.empty() ? "" : " under those given: " + given.values.dump()));
    }
    uses_config = true;
  }
  if (policy_set && !uses_config)
    throw std::invalid_argument(
        "--set policy.*: no replayed policy uses the configuration's [policy] (" + cfg.policy +
        "); add 'config' to --policies");
  if (stated && !uses_config)
    notes.push_back("the configuration's [policy] (" + cfg.policy + " " +
                    cfg.policy_params.values.dump() +
                    ") is not replayed: the policies replayed are the command line's; give "
                    "--policies config to replay it");
}

bool sets_policy(const std::vector<std::string>& sets) {
  return std::any_of(sets.begin(), sets.end(),
                     [](const std::string& s) { return s.rfind("policy.", 0) == 0; });
}

// Recorded arrivals (--csv or --pcap) on the --config switch; "config" policies become the file's.
ReplayScenario load_recorded(const Options& o, std::vector<ReplayPolicy>& policies,
                             std::string& input, std::vector<std::string>& notes) {
  if (o.config_path.empty())
    throw std::invalid_argument("--csv and --pcap need --config (ports, rates, buffer)");
  toml::table root;
  try {
    root = toml::parse(sharebuf::config::read_config_text(o.config_path), o.config_path);
  } catch (const toml::parse_error& e) {
    throw sharebuf::common::ConfigError(sharebuf::config::location(o.config_path, e.source()) +
                                        ": " + std::string(e.description()));
  }
  const bool stated = root.contains("policy") || sets_policy(o.sets);
  const sharebuf::model::SwitchConfig cfg = with_overrides(root, o.config_path, o.sets, notes);
  resolve_policies(policies, cfg, stated, sets_policy(o.sets), notes);
  ReplayScenario sc;
  sc.config = sharebuf::sim::replay_config(cfg);
  for (const auto& p : cfg.ports)
    for (uint32_t k = 0; k < p.num_queues; ++k)
      sc.queue_labels.push_back(p.name + "/" + std::to_string(k));
  if (!o.csv.empty()) {
    sc.arrivals = sharebuf::sim::read_arrivals_csv(o.csv, cfg);
    input = "csv " + o.csv;
    sc.description = std::to_string(sc.arrivals.size()) + " arrivals from " + o.csv;
  } else {
    std::vector<sharebuf::sim::PcapInput> in;
    for (const std::string& spec : o.pcaps) {
      sharebuf::sim::PcapInput pi;
      const auto at = spec.rfind('@');
      pi.path = spec.substr(0, at);
      if (at != std::string::npos) {
        const std::string port = spec.substr(at + 1);
        const auto it = std::find_if(cfg.ports.begin(), cfg.ports.end(),
                                     [&](const auto& p) { return p.name == port; });
        if (it == cfg.ports.end())
          throw std::invalid_argument("--pcap " + spec + ": no port '" + port + "' in the config");
        pi.in_port = static_cast<uint16_t>(it - cfg.ports.begin());
      }
      in.push_back(pi);
    }
    sharebuf::sim::PcapReadStats st;
    sc.arrivals = sharebuf::sim::read_arrivals_pcap(in, cfg, st);
    input = "pcap";
    sc.description =
        std::to_string(st.frames) + " frames read, " + std::to_string(sc.arrivals.size()) +
        " replayed, " + std::to_string(st.flooded) + " flooded (no known destination port), " +
        std::to_string(st.filtered) + " filtered (destination on the ingress port) and " +
        std::to_string(st.malformed) + " malformed skipped";
  }
  sc.end_ns = sharebuf::sim::default_end_ns(sc.arrivals);
  return sc;
}

// A built-in scenario's switch with the --set overrides over it. The generator made its arrivals
// for its own ports and buffer: those are the generator's options (--ports, --buffer-cells).
ReplayScenario scenario_with_overrides(const Options& o, std::vector<ReplayPolicy>& policies,
                                       std::vector<std::string>& notes) {
  ReplayScenario sc = sharebuf::sim::make_scenario(o.scenario, o.so);
  for (const std::string& s : o.sets) {
    for (const char* fixed : {"ports", "buffer.size", "buffer.cell_bytes"}) {
      if (s.rfind(std::string(fixed) + (std::string(fixed) == "ports" ? "" : "="), 0) == 0 ||
          s.rfind(std::string(fixed) + ".", 0) == 0)
        throw std::invalid_argument("--set " + s + ": scenario " + o.scenario +
                                    " made its arrivals for its own ports and buffer; change "
                                    "them with --ports and --buffer-cells");
    }
  }
  if (!o.sets.empty()) {
    const std::string source = "scenario " + o.scenario;
    sc.config =
        with_overrides(toml::parse(sharebuf::config::write_switch_config(sc.config), source),
                       source, o.sets, notes);
  }
  resolve_policies(policies, sc.config, sets_policy(o.sets), sets_policy(o.sets), notes);
  return sc;
}

// The view options are overrides of [buffer] (--set buffer.view=..., before any --set given).
void view_options_as_overrides(Options& o) {
  std::vector<std::string> view;
  if (!o.view.empty()) view.push_back("buffer.view=" + o.view);
  auto us = [](double v) {
    return std::to_string(static_cast<uint64_t>(std::llround(v * 1e3))) + "ns";
  };
  if (o.probe_interval_us >= 0) view.push_back("buffer.probe_interval=" + us(o.probe_interval_us));
  if (o.probe_delay_us >= 0) view.push_back("buffer.probe_delay=" + us(o.probe_delay_us));
  o.sets.insert(o.sets.begin(), view.begin(), view.end());
}

// Every policy over the same arrivals, with the output files the options ask for.
std::vector<ReplayResult> run_all(const Options& o, const ReplayScenario& sc,
                                  const std::vector<ReplayPolicy>& policies) {
  sharebuf::sim::ReplayOptions base;
  base.end_ns = sc.end_ns;
  base.arrivals_first = o.order == "arrivals-first";
  base.feature_base_rtt_ns = o.base_rtt_us * 1000;
  // LQD's fate of every arrival: for Credence's perfect oracle and the training trace.
  const bool needs_labels =
      std::any_of(policies.begin(), policies.end(), [](const ReplayPolicy& p) {
        return p.name == "credence" && (p.params.values.value("oracle", "") == "perfect" ||
                                        p.params.values.value("flip_base", "") == "perfect");
      });
  if (needs_labels || !o.trace_path.empty()) {
    sharebuf::sim::ReplayOptions lo = base;
    std::ofstream trace;
    if (!o.trace_path.empty()) {
      trace = open_out(o.trace_path);
      lo.trace = &trace;
    }
    ReplayResult lqd = sharebuf::sim::run_replay(sc.config, {"lqd", "lqd", {}}, sc.arrivals, lo);
    base.oracle_labels = std::make_shared<const std::vector<uint8_t>>(std::move(lqd.fates));
  }
  std::ofstream timeline, departures, trim_notes;
  if (!o.timeline_path.empty()) {
    timeline = open_out(o.timeline_path);
    base.timeline = &timeline;
    base.timeline_interval_ns = static_cast<uint64_t>(o.timeline_us * 1000);
  }
  if (!o.departures_path.empty()) {
    departures = open_out(o.departures_path);
    departures << sharebuf::sim::kDeparturesHeader << '\n';
    base.departures = &departures;
  }
  if (!o.trim_notes_path.empty()) {
    trim_notes = open_out(o.trim_notes_path);
    trim_notes << sharebuf::sim::kTrimNotesHeader << '\n';
    base.trim_notes = &trim_notes;
  }
  std::vector<ReplayResult> results;
  for (const ReplayPolicy& p : policies) {
    results.push_back(sharebuf::sim::run_replay(sc.config, p, sc.arrivals, base));
    base.timeline_header = false;
  }
  return results;
}

void write_fates(const std::string& path, size_t arrivals,
                 const std::vector<ReplayResult>& results) {
  std::ofstream fates = open_out(path);
  fates << "seq";
  for (const ReplayResult& r : results)
    fates << ',' << r.policy;
  fates << '\n';
  for (size_t i = 0; i < arrivals; ++i) {
    fates << i;
    for (const ReplayResult& r : results)
      fates << ',' << (i < r.fates.size() ? int{r.fates[i]} : -1);
    fates << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sharebuf-replay: replay arrivals through sharebuf's shared buffer under several policies "
      "(simulated clock and line-rate egress, the live switch's policies and schedulers; "
      "deterministic)",
      "sharebuf-replay"};
  app.set_version_flag("--version", "sharebuf-replay " + std::string(sharebuf::common::kVersion));
  Options o;
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  try {
    if (o.params_markdown) {
      std::cout << sharebuf::policies::params_markdown();
      return 0;
    }
    if (!o.params_markdown_of.empty()) {
      std::cout << sharebuf::policies::params_markdown(o.params_markdown_of);
      return 0;
    }
    if (o.list) {
      print_list();
      return 0;
    }
    const int inputs = !o.scenario.empty() + !o.csv.empty() + !o.pcaps.empty();
    if (inputs > 1) throw std::invalid_argument("give one of --scenario, --csv, --pcap");
    if (inputs == 0) o.scenario = "burst";
    std::vector<ReplayPolicy> policies = parse_policies(o);
    view_options_as_overrides(o);
    std::string input = "scenario " + o.scenario;
    std::vector<std::string> notes;
    ReplayScenario sc = o.scenario.empty() ? load_recorded(o, policies, input, notes)
                                           : scenario_with_overrides(o, policies, notes);
    for (const ReplayPolicy& p : policies) {
      if (p.name == "config")
        throw std::invalid_argument(
            "policy 'config' is the configuration's [policy]: give "
            "--config, or --set policy.name=NAME");
    }
    if (o.end_ms > 0) sc.end_ns = static_cast<uint64_t>(o.end_ms * 1e6);
    // Said on stderr whatever the output: what the command line put over the configuration.
    for (const std::string& n : notes)
      std::fprintf(stderr, "sharebuf-replay: %s\n", n.c_str());
    const std::vector<ReplayResult> results = run_all(o, sc, policies);
    // The switch as replayed, with each policy as it ran.
    std::string effective = sharebuf::config::write_switch_config(sc.config);
    {
      std::string head = "# sharebuf-replay's effective configuration (" + input + ")\n";
      for (const ReplayResult& r : results)
        head += "# replayed: " + r.policy + " " + r.params.dump() + "\n";
      for (const std::string& n : notes)
        head += "# note: " + n + "\n";
      effective = head + effective;
    }
    if (!o.effective_config_path.empty()) open_out(o.effective_config_path) << effective;
    if (!o.fates_path.empty()) write_fates(o.fates_path, sc.arrivals.size(), results);
    if (o.json) {
      nlohmann::json j = to_json(input, sc.description, sc.queue_labels, results, o.with_state);
      j["notes"] = notes;
      j["effective_config"] = effective;
      std::cout << j.dump(2) << "\n";
    } else {
      std::printf("%s: %s\n\n", input.c_str(), sc.description.c_str());
      print_summary(results, sc.config.buffer.capacity_cells);
      if (o.per_queue) print_queues(sc.queue_labels, results);
    }
    for (const ReplayResult& r : results)
      if (!r.accounting_errors.empty()) return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharebuf-replay: %s\n", e.what());
    return 2;
  }
  return 0;
}

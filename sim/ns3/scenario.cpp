#include "sim/ns3/scenario.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <toml++/toml.h>

#include "common/bounded_input.h"
#include "common/data_files.h"
#include "common/units.h"
#include "config/overrides.h"
#include "config/switch_config_reader.h"
#include "config/toml_reader.h"
#include "sim/ns3/unmodelled.h"
#include "sim/replay_inputs.h"

namespace sharebuf::sim {
namespace {

using config::ConfigError;
using config::TableReader;

constexpr size_t kMaxScenarioBytes = 4 << 20;

uint8_t dscp(TableReader& r, std::string_view key) {
  return static_cast<uint8_t>(r.integer(key, 0, 63).value_or(0));
}

// A byte count: an integer, or a string with a size unit ("64KB", "1.5MB"; not cells).
std::optional<uint64_t> bytes(TableReader& r, std::string_view key) {
  return r.with_unit(key, [](std::string_view s) {
    const std::string lower = [&] {
      std::string out;
      for (char c : s)
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return out;
    }();
    if (lower.find("cell") != std::string::npos)
      throw std::invalid_argument("'" + std::string(s) + "': give bytes here (B, KB, MB, ...)");
    return common::parse_size_cells(s, 1);
  });
}

// The keys of a topology kind that the other kind does not have are refused by name.
void refuse(TableReader& r, std::string_view key, std::string_view why) {
  if (r.table().get(key) != nullptr) r.fail(key, std::string(why));
}

// The scenario file parsed, overrides applied. Parsed afresh for every switch: a switch's table
// is made of the file's nodes moved into it, since toml++ drops a node's position on a copy and
// every error must name the file's line.
toml::table parse_scenario(const std::string& text, const std::string& path,
                           const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(config::location(path, e.source()) + ": " + std::string(e.description()));
  }
  for (const std::string& o : overrides)
    config::apply_override(root, o);
  return root;
}

struct Builder {
  const std::string& file;
  const std::string& text;
  const std::vector<std::string>& overrides;
  const toml::table& root;
  Scenario& s;

  const toml::table* section(TableReader& parent, std::string_view key, bool required) {
    const toml::node* n = parent.get(key);
    if (n == nullptr) {
      if (required)
        parent.fail_table("a [" + std::string(key) + "] table is required (docs/ns3.md)");
      return nullptr;
    }
    if (!n->is_table()) parent.fail(key, "must be a table ([" + std::string(key) + "])");
    return n->as_table();
  }

  void topology(const toml::table& t) {
    TableReader r(t, file, "[topology]");
    const std::string kind = r.choice("kind", "", {"star", "leaf-spine"});
    if (kind.empty()) r.fail_table("key 'kind' is required: \"star\" or \"leaf-spine\"");
    s.leaf_spine = kind == "leaf-spine";
    if (s.leaf_spine) {
      refuse(r, "hosts", "is for kind = \"star\"; a fabric has leaves x hosts_per_leaf hosts");
      s.spines = static_cast<uint32_t>(r.integer("spines", 1, 64).value_or(0));
      s.leaves = static_cast<uint32_t>(r.integer("leaves", 2, 256).value_or(0));
      s.hosts_per_leaf = static_cast<uint32_t>(r.integer("hosts_per_leaf", 1, 256).value_or(0));
      if (s.spines == 0 || s.leaves == 0 || s.hosts_per_leaf == 0)
        r.fail_table("a leaf-spine fabric needs spines, leaves and hosts_per_leaf");
      s.hosts = s.leaves * s.hosts_per_leaf;
      if (s.hosts > 4096) r.fail("hosts_per_leaf", "leaves x hosts_per_leaf is over 4096 hosts");
      s.ecmp_seed = static_cast<uint32_t>(r.integer("ecmp_seed", 0, 0xffffffff).value_or(0));
    } else {
      for (const char* k : {"spines", "leaves", "hosts_per_leaf", "fabric_rate", "ecmp_seed"})
        refuse(r, k, "is for kind = \"leaf-spine\"");
      s.hosts = static_cast<uint32_t>(r.integer("hosts", 2, 1024).value_or(0));
      if (s.hosts == 0) r.fail_table("a star needs 'hosts'");
    }
    s.host_rate_bps = r.with_unit("host_rate", common::parse_rate_bps).value_or(10'000'000'000);
    s.fabric_rate_bps =
        r.with_unit("fabric_rate", common::parse_rate_bps).value_or(s.host_rate_bps);
    if (s.host_rate_bps < 1'000'000 || s.host_rate_bps > 1'000'000'000'000)
      r.fail("host_rate", "must be between 1Mbit and 1000Gbit");
    if (s.fabric_rate_bps < 1'000'000 || s.fabric_rate_bps > 1'000'000'000'000)
      r.fail("fabric_rate", "must be between 1Mbit and 1000Gbit");
    s.delay_ns = r.with_unit("delay", common::parse_duration_ns).value_or(10'000);
    if (s.delay_ns > 1'000'000'000) r.fail("delay", "must be at most 1s");
    s.oversubscription = s.leaf_spine ? static_cast<double>(s.host_rate_bps) * s.hosts_per_leaf /
                                            (static_cast<double>(s.fabric_rate_bps) * s.spines)
                                      : 1.0;
    r.finish();
  }

  // Every switch's sharebufd configuration: [switches] without its own sub-tables `ports`, `leaf`
  // and `spine`; on a leaf (spine) each table of [switches.leaf] ([switches.spine]) replaces the
  // table of the same name; then one [[ports]] per port with the settings of [switches.ports].
  toml::table switch_table(const char* role, const std::vector<std::string>& names,
                           const std::vector<uint64_t>& rates) {
    toml::table fresh = parse_scenario(text, file, overrides);
    toml::table& sw = *fresh.get("switches")->as_table();
    toml::table out;
    toml::table* tmpl = nullptr;
    for (auto&& [k, v] : sw) {
      const std::string key(k.str());
      if (key == "ports") {
        if (!v.is_table()) {
          throw ConfigError(config::location(file, v.source()) +
                            ": [switches] key 'ports': must be a table of settings for every "
                            "port ([switches.ports]); the topology makes the ports");
        }
        tmpl = v.as_table();
        continue;
      }
      if (key == "leaf" || key == "spine") continue;
      out.insert(k, std::move(v));
    }
    if (role != nullptr) {
      if (toml::node* n = sw.get(role)) {
        if (!n->is_table()) {
          throw ConfigError(config::location(file, n->source()) + ": [switches] key '" + role +
                            "': must be a table ([switches." + role + "])");
        }
        for (auto&& [k, v] : *n->as_table())
          out.insert_or_assign(k, std::move(v));
      }
    }
    if (tmpl != nullptr) {
      for (const char* k : {"interface", "rate"}) {
        if (const toml::node* bad = tmpl->get(k)) {
          throw ConfigError(config::location(file, bad->source()) + ": [switches.ports] key '" + k +
                            "': set by the topology");
        }
      }
    }
    // The first port takes the template's own nodes (their positions, for errors: the ports are
    // read in order, so a bad setting fails there); the others a copy.
    const toml::table copy = tmpl != nullptr ? *tmpl : toml::table{};
    toml::array ports;
    for (size_t i = 0; i < names.size(); ++i) {
      toml::table port = (i == 0 && tmpl != nullptr) ? std::move(*tmpl) : copy;
      port.insert_or_assign("interface", names[i]);
      port.insert_or_assign("rate", static_cast<int64_t>(rates[i]));
      ports.push_back(std::move(port));
    }
    out.insert_or_assign("ports", std::move(ports));
    return out;
  }

  void add_switch(const char* role, const std::string& name, const std::vector<std::string>& ports,
                  const std::vector<uint64_t>& rates) {
    const toml::table t = switch_table(role, ports, rates);
    const model::SwitchConfig cfg = config::read_switch_config(t, file);
    config::validate_switch_config(cfg);
    refuse_unmodelled(cfg, file + " (" + name + ")");
    std::ostringstream config;
    config << "# " << name << " of " << file << " (sharebuf-sim)\n" << t << "\n";
    ScenarioSwitch out;
    out.name = name;
    out.role = role != nullptr ? role : "star";
    out.config_toml = config.str();
    out.buffer_bytes = uint64_t{cfg.buffer.capacity_cells} * cfg.buffer.cell_bytes;
    s.switches.push_back(std::move(out));
  }

  void switches(const toml::table& sw) {
    if (!s.leaf_spine) {
      for (const char* k : {"leaf", "spine"}) {
        if (const toml::node* n = sw.get(k)) {
          throw ConfigError(config::location(file, n->source()) + ": [switches] key '" + k +
                            "': a star has no " + k + "s");
        }
      }
      std::vector<std::string> names;
      for (uint32_t h = 0; h < s.hosts; ++h)
        names.push_back("h" + std::to_string(h));
      add_switch(nullptr, "switch", names, std::vector<uint64_t>(s.hosts, s.host_rate_bps));
      return;
    }
    for (uint32_t l = 0; l < s.leaves; ++l) {
      std::vector<std::string> names;
      std::vector<uint64_t> rates;
      for (uint32_t h = 0; h < s.hosts_per_leaf; ++h) {
        names.push_back("h" + std::to_string(l * s.hosts_per_leaf + h));
        rates.push_back(s.host_rate_bps);
      }
      for (uint32_t p = 0; p < s.spines; ++p) {
        names.push_back("spine" + std::to_string(p));
        rates.push_back(s.fabric_rate_bps);
      }
      add_switch("leaf", "leaf" + std::to_string(l), names, rates);
    }
    for (uint32_t p = 0; p < s.spines; ++p) {
      std::vector<std::string> names;
      for (uint32_t l = 0; l < s.leaves; ++l)
        names.push_back("leaf" + std::to_string(l));
      add_switch("spine", "spine" + std::to_string(p), names,
                 std::vector<uint64_t>(s.leaves, s.fabric_rate_bps));
    }
  }

  void transport(const toml::table& t) {
    TableReader r(t, file, "[transport]");
    s.cc = r.choice("cc", s.cc, {"dctcp", "cubic", "newreno"});
    // Classic ECN for cubic and newreno when asked (a live Linux host without dctcp does that:
    // net.ipv4.tcp_ecn = 1), always for dctcp, whose window follows the marks.
    s.ecn = r.boolean("ecn").value_or(s.cc == "dctcp");
    if (s.cc == "dctcp" && !s.ecn) r.fail("ecn", "dctcp needs ECN (remove the key or set true)");
    s.rto_min_ns = r.with_unit("rto_min", common::parse_duration_ns).value_or(s.rto_min_ns);
    if (s.rto_min_ns < 1000 || s.rto_min_ns > 10'000'000'000ull)
      r.fail("rto_min", "must be between 1us and 10s");
    s.initial_cwnd = static_cast<uint32_t>(r.integer("initial_cwnd", 1, 10000).value_or(10));
    s.segment_bytes = static_cast<uint32_t>(r.integer("segment_size", 536, 8948).value_or(1448));
    s.delayed_ack = static_cast<uint32_t>(r.integer("delayed_ack", 1, 16).value_or(s.delayed_ack));
    s.initial_rtt_ns =
        r.with_unit("initial_rtt", common::parse_duration_ns).value_or(s.initial_rtt_ns);
    if (s.initial_rtt_ns < 1000 || s.initial_rtt_ns > 10'000'000'000ull)
      r.fail("initial_rtt", "must be between 1us and 10s");
    s.syn_retries = static_cast<uint32_t>(r.integer("syn_retries", 1, 30).value_or(6));
    s.syn_timeout_ns = r.with_unit("syn_timeout", common::parse_duration_ns).value_or(0);
    if (s.syn_timeout_ns != 0 && (s.syn_timeout_ns < 1000 || s.syn_timeout_ns > 10'000'000'000ull))
      r.fail("syn_timeout", "must be between 1us and 10s");
    s.socket_buffer_bytes = bytes(r, "socket_buffer").value_or(s.socket_buffer_bytes);
    if (s.socket_buffer_bytes < 16'384 || s.socket_buffer_bytes > (1u << 30))
      r.fail("socket_buffer", "must be between 16KB and 1GiB");
    r.finish();
  }

  void websearch(const toml::table& t, const std::string& data_dir) {
    TableReader r(t, file, "[workload.websearch]");
    auto& w = s.websearch;
    w.enabled = true;
    const auto load = r.number("load", 0.001, 1.0);
    if (!load) r.fail_table("key 'load' is required (0 < load <= 1)");
    w.load = *load;
    w.cdf = r.string("cdf").value_or(data_dir + "/websearch-flow-size-cdf.txt");
    if (!w.cdf.empty() && w.cdf.front() != '/') {
      w.cdf = (std::filesystem::path(file).parent_path() / w.cdf).lexically_normal().string();
    }
    const std::string dest =
        r.choice("destinations", s.leaf_spine ? "other-leaf" : "any", {"other-leaf", "any"});
    if (dest == "other-leaf" && !s.leaf_spine)
      r.fail("destinations", "\"other-leaf\" needs a leaf-spine fabric");
    w.other_leaf = dest == "other-leaf";
    w.short_below = bytes(r, "short_below").value_or(w.short_below);
    w.dscp_short = dscp(r, "dscp_short");
    w.dscp_long = dscp(r, "dscp_long");
    r.finish();
  }

  void incast(const toml::table& t) {
    TableReader r(t, file, "[workload.incast]");
    auto& q = s.incast;
    q.enabled = true;
    const auto rate = r.number("rate", 1e-6, 1e6);
    if (!rate) r.fail_table("key 'rate' is required (queries per second per aggregator)");
    q.rate = *rate;
    q.aggregators = static_cast<uint32_t>(r.integer("aggregators", 0, s.hosts).value_or(0));
    const auto fan_in = r.integer("fan_in", 1, s.hosts - 1);
    if (!fan_in) r.fail_table("key 'fan_in' is required");
    q.fan_in = static_cast<uint32_t>(*fan_in);
    const std::string resp =
        r.choice("responders", s.leaf_spine ? "one-leaf" : "random", {"one-leaf", "random"});
    q.one_leaf = resp == "one-leaf";
    if (q.one_leaf && !s.leaf_spine) r.fail("responders", "\"one-leaf\" needs a leaf-spine fabric");
    if (q.one_leaf && q.fan_in > s.hosts_per_leaf) {
      r.fail("fan_in", "responders = \"one-leaf\" takes them from one leaf of " +
                           std::to_string(s.hosts_per_leaf) + " hosts");
    }
    // The size: bytes, or a share of the aggregator's switch's buffer ("75%").
    const toml::node* size = r.get("size");
    if (size == nullptr) r.fail_table("key 'size' is required (bytes, or \"75%\" of the buffer)");
    const uint64_t buffer = s.switches.front().buffer_bytes;  // the star's switch or leaf0
    if (size->is_string() && size->as_string()->get().ends_with("%")) {
      const std::string share = size->as_string()->get();
      double pct = -1;
      try {
        pct = std::stod(share.substr(0, share.size() - 1));
      } catch (...) {
      }
      if (!(pct > 0 && pct <= 10000)) r.fail("size", "'" + share + "': a percentage in (0, 10000]");
      q.bytes = static_cast<uint64_t>(std::llround(pct / 100.0 * static_cast<double>(buffer)));
    } else {
      q.bytes = bytes(r, "size").value_or(0);
    }
    if (q.bytes < q.fan_in) r.fail("size", "gives each responder less than one byte");
    q.dscp = dscp(r, "dscp");
    if (const toml::node* iw = r.get("initial_cwnd")) {
      if (iw->is_string() && iw->as_string()->get() == "whole") {
        q.whole_response_cwnd = true;
      } else {
        q.initial_cwnd = static_cast<uint32_t>(r.integer("initial_cwnd", 1, 100000).value_or(0));
      }
    }
    r.finish();
  }

  void fixed_flow(const toml::table& t, size_t index) {
    TableReader r(t, file, "[[workload.flows]] #" + std::to_string(index + 1));
    Scenario::FixedFlow f;
    const int64_t last = s.hosts - 1;
    if (const toml::node* from = r.get("from"); from != nullptr && from->is_integer()) {
      f.from.push_back(static_cast<uint32_t>(r.integer("from", 0, last).value_or(0)));
    } else {
      for (int64_t h : r.integer_list("from", 0, last))
        f.from.push_back(static_cast<uint32_t>(h));
    }
    if (f.from.empty()) r.fail_table("key 'from' is required (a host number or a list of them)");
    const auto to = r.integer("to", 0, last);
    if (!to) r.fail_table("key 'to' is required (a host number)");
    f.to = static_cast<uint32_t>(*to);
    if (std::find(f.from.begin(), f.from.end(), f.to) != f.from.end())
      r.fail("from", "host " + std::to_string(f.to) + " would send to itself");
    f.udp = r.choice("protocol", "tcp", {"tcp", "udp"}) == "udp";
    if (f.udp) {
      const auto rate = r.number("rate", 1e-6, 100);
      if (!rate) r.fail_table("a UDP flow needs 'rate' (a multiple of the sender's link rate)");
      f.rate = *rate;
      refuse(r, "bytes", "is for TCP flows");
    } else {
      refuse(r, "rate", "is for UDP flows (TCP sends as fast as its window allows)");
      f.bytes = bytes(r, "bytes").value_or(0);
    }
    f.start_ns = r.with_unit("start", common::parse_duration_ns).value_or(0);
    f.dscp = dscp(r, "dscp");
    r.finish();
    s.flows.push_back(std::move(f));
  }

  void workload(const toml::table& t, const std::string& data_dir) {
    TableReader r(t, file, "[workload]");
    if (const toml::table* w = section(r, "websearch", false)) websearch(*w, data_dir);
    if (const toml::table* q = section(r, "incast", false)) incast(*q);
    const auto flows = config::tables_of(r, "flows");
    for (size_t i = 0; i < flows.size(); ++i)
      fixed_flow(*flows[i], i);
    if (!s.websearch.enabled && !s.incast.enabled && s.flows.empty()) {
      r.fail_table(
          "no traffic: give [workload.websearch], [workload.incast] or [[workload.flows]]");
    }
    r.finish();
  }

  void run(const toml::table& t) {
    TableReader r(t, file, "[run]");
    const auto duration = r.with_unit("duration", common::parse_duration_ns);
    if (!duration) r.fail_table("key 'duration' is required (simulated time, e.g. \"0.2s\")");
    if (*duration < 1000 || *duration > 1000'000'000'000ull)
      r.fail("duration", "must be between 1us and 1000s");
    s.duration_ns = *duration;
    s.flows_until = r.number("flows_until", 0.01, 1.0).value_or(s.flows_until);
    s.seed = static_cast<uint32_t>(r.integer("seed", 1, 1'000'000'000).value_or(1));
    s.sample_ns = r.with_unit("sample_interval", common::parse_duration_ns).value_or(s.sample_ns);
    if (s.sample_ns < 1000 || s.sample_ns > s.duration_ns)
      r.fail("sample_interval", "must be between 1us and the duration");
    s.sample_queues = r.boolean("sample_queues").value_or(false);
    r.finish();
  }

  void read(const std::string& data_dir) {
    TableReader top(root, file, "top level");
    topology(*section(top, "topology", true));
    switches(*section(top, "switches", true));
    if (const toml::table* t = section(top, "transport", false)) transport(*t);
    workload(*section(top, "workload", true), data_dir);
    run(*section(top, "run", true));
    top.finish();
  }
};

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  Scenario s;
  s.source = path;
  // ConfigError and InputError are std::runtime_errors naming file, line and key.
  {
    const std::string text =
        common::read_regular_file(path, kMaxScenarioBytes, "the scenario file");
    toml::table root = parse_scenario(text, path, overrides);
    Builder b{path, text, overrides, root, s};
    b.read(common::data_dir("websearch-flow-size-cdf.txt"));
    std::ostringstream effective;
    effective << "# " << path;
    for (const std::string& o : overrides)
      effective << " --set " << o;
    effective << "\n" << root << "\n";
    s.text = effective.str();
  }
  return s;
}

}  // namespace sharebuf::sim

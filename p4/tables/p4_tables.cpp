#include "p4/tables/p4_tables.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "model/switch_config.h"
#include "policies/class_alpha.h"
#include "policies/registry.h"
#include "policies/tofino_arithmetic.h"

namespace sharebuf::p4 {
namespace {

using nlohmann::json;
using policies::TofinoArithmetic;

// Tofino 1 (tofino1_specs.p4, and the numbers the programs are written for).
constexpr uint32_t kCellBytes = 80;
constexpr uint32_t kMaxDepthCells = (1u << 19) - 1;  // egress_intrinsic_metadata_t.deq_qdepth
constexpr uint32_t kMaxPorts = 64;                   // SB_MAX_PORTS
constexpr uint32_t kMaxQueues = 2048;                // SB_MAX_QUEUES
constexpr uint32_t kMaxQueuesPerPort = 32;           // QueueId_t is 5 bits
constexpr uint32_t kMaxPipes = 4;
constexpr uint32_t kPktgenPortInPipe = 68;
constexpr uint32_t kRecircPortInPipe = 69;
constexpr uint32_t kFbShiftEntries = 16384;
constexpr int kFbMaxRightShift = 16;
constexpr int kFbMaxLeftShift = 6;
// Mirror sessions: one per pipe toward its recirculation port, one per port's header queue
// (trim.p4), one multicasting NOTIFYs (trim.p4).
constexpr uint32_t kRecircSessionBase = 1;
constexpr uint32_t kNotifySession = 15;
constexpr uint32_t kTrimSessionBase = 16;
constexpr uint32_t kNotifyMulticastGroup = 1;
constexpr uint32_t kProbeMulticastGroup = 2;
constexpr uint32_t kLongestHeadersBytes = 14 + 4 + 60 + 60;  // Ethernet, 802.1Q, IPv4, TCP
constexpr uint32_t kSbHeaderBytes = 33;                      // sharebuf_h (p4/include/headers.p4)
constexpr uint8_t kSbProbe = 1;                              // sharebuf_h.kind of a probe
// What a probe weighs in the traffic manager: the bridged sb_meta_h (6 bytes) and sharebuf_h (the
// packet generator's 6-byte header is removed in ingress). A port's shaper charges it when the
// probe leaves its queue, though egress then drops it and it never reaches the wire.
constexpr uint32_t kProbeTmBytes = 6 + kSbHeaderBytes;
// Above this share of a port's rate the probes change what they measure (p4/README.md).
constexpr double kProbeShareLimit = 0.01;
// Tofino 1's recirculation ports run at 100 Gbit/s.
constexpr uint64_t kRecircPortBps = 100'000'000'000ull;

[[noreturn]] void fail(const std::string& what) {
  throw P4TablesError(what);
}

std::string hex(uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << v;
  return out.str();
}

json entry(json match, const std::string& action, json data, int priority = -1) {
  json e = {{"match", std::move(match)}, {"action", action}, {"data", std::move(data)}};
  if (priority >= 0) e["priority"] = priority;
  return e;
}

// What every program needs: the configuration checked against the hardware, the ports' device
// numbers, the policy object (for its parameters, defaults included) and its environment.
struct Context {
  const model::SwitchConfig& cfg;
  std::string program;
  std::string ingress, egress;  // the program's control names (bfrt: pipe.<control>.<table>)
  std::vector<uint16_t> dev_ports;
  uint32_t pipes = 1;
  uint32_t queues_per_port = 1;
  uint32_t num_queues = 0;
  std::unique_ptr<buffer::BufferLayout> layout;
  policies::PolicyEnv env;
  json tables = json::array();

  std::string ig(const std::string& path) const { return "pipe." + ingress + "." + path; }
  std::string eg(const std::string& path) const { return "pipe." + egress + "." + path; }
  json& table(const std::string& name) {
    for (json& t : tables) {
      if (t["table"] == name) return t;
    }
    tables.push_back({{"table", name}, {"entries", json::array()}});
    return tables.back();
  }
  void add(const std::string& name, json e) { table(name)["entries"].push_back(std::move(e)); }
  void set_default(const std::string& name, const std::string& action, json data) {
    table(name)["default_action"] = {{"action", action}, {"data", std::move(data)}};
  }
  uint32_t recirc_port(uint32_t pipe) const { return pipe * 128 + kRecircPortInPipe; }
  uint32_t pktgen_port(uint32_t pipe) const { return pipe * 128 + kPktgenPortInPipe; }
  // Every pipe's recirculation port: a multicast group that reaches each pipe's ingress.
  json recirc_ports() const {
    json ports = json::array();
    for (uint32_t pipe = 0; pipe < pipes; ++pipe)
      ports.push_back(recirc_port(pipe));
    return ports;
  }
};

// The packet generator's application: a periodic timer on pipe 0 sending `per_batch` packets of
// the pktgen header (6 bytes, which the generator puts in front of its buffer's bytes) and
// sharebuf_h with `kind` and every other field 0. `packet_hex` is the packet as ingress parses
// it; the loader writes all but its first 6 bytes into the generator's buffer.
json pktgen(const Context& c, uint32_t app_id, uint32_t per_batch, uint8_t kind) {
  std::string bytes(6 + kSbHeaderBytes, '\0');
  bytes[6] = static_cast<char>(kind);
  std::ostringstream packet;
  for (const char b : bytes)
    packet << std::hex << std::setw(2) << std::setfill('0')
           << static_cast<unsigned>(static_cast<uint8_t>(b));
  return {{"app_id", app_id},
          {"trigger", "periodic timer"},
          {"pipe", 0},
          {"src_port", c.pktgen_port(0)},
          {"timer_ns", c.cfg.buffer.probe_interval_ns},
          {"batch_count", 1},
          {"packets_per_batch", per_batch},
          {"packet_bytes", bytes.size()},
          {"packet_hex", packet.str()}};
}

void check_hardware(Context& c, const P4TablesOptions& opt) {
  const model::SwitchConfig& cfg = c.cfg;
  if (cfg.buffer.cell_bytes != kCellBytes) {
    fail("[buffer] cell_bytes is " + std::to_string(cfg.buffer.cell_bytes) +
         ": Tofino's cells are 80 bytes (the programs read queue depths in its cells)");
  }
  if (cfg.buffer.capacity_cells > kMaxDepthCells) {
    fail("[buffer] size is " + std::to_string(cfg.buffer.capacity_cells) +
         " cells: more than Tofino's 19-bit queue depth holds (" + std::to_string(kMaxDepthCells) +
         " cells)");
  }
  if (cfg.ports.empty() || cfg.ports.size() > kMaxPorts)
    fail("[[ports]]: the programs hold 1 to 64 ports (SB_MAX_PORTS)");
  c.queues_per_port = cfg.ports.front().num_queues;
  for (const model::PortConfig& p : cfg.ports) {
    if (p.num_queues != c.queues_per_port) {
      fail("[[ports]] '" + p.name + "' has " + std::to_string(p.num_queues) + " queues and '" +
           cfg.ports.front().name + "' " + std::to_string(c.queues_per_port) +
           ": the programs index queues as port x queues_per_port, so every port needs the same "
           "number");
    }
  }
  if (c.queues_per_port > kMaxQueuesPerPort)
    fail("[[ports]] queues: Tofino has at most 32 queues per port");
  c.num_queues = c.queues_per_port * static_cast<uint32_t>(cfg.ports.size());
  if (c.num_queues > kMaxQueues)
    fail("ports x queues is " + std::to_string(c.num_queues) + ": more than SB_MAX_QUEUES (2048)");
  if (cfg.classify != model::ClassifyMode::kDscp)
    fail("[classify] mode: the programs classify by DSCP (mode = \"dscp\")");
  c.dev_ports = opt.dev_ports;
  if (c.dev_ports.empty()) {
    for (uint16_t i = 0; i < cfg.ports.size(); ++i)
      c.dev_ports.push_back(i);
  }
  if (c.dev_ports.size() != cfg.ports.size()) {
    fail("--dev-ports lists " + std::to_string(c.dev_ports.size()) + " device ports for " +
         std::to_string(cfg.ports.size()) + " configured ports");
  }
  std::set<uint16_t> seen;
  for (uint16_t d : c.dev_ports) {
    if (d >= 128 * kMaxPipes || d % 128 == kPktgenPortInPipe || d % 128 == kRecircPortInPipe ||
        !seen.insert(d).second) {
      fail("--dev-ports: " + std::to_string(d) +
           " is not a free front-panel device port (below 512, not 68 or 69 of a pipe, once)");
    }
  }
  uint32_t port_pipes = 1;  // pipes the ports are in (device port / 128)
  for (uint16_t d : c.dev_ports)
    port_pipes = std::max<uint32_t>(port_pipes, d / 128 + 1);
  if (opt.pipes != 0) {
    c.pipes = opt.pipes;
  } else if (opt.program == "trim") {
    c.pipes = std::max<uint32_t>(1, cfg.rx_threads);  // [trimming] pipelines, as the twin runs
  } else {
    c.pipes = port_pipes;
  }
  if (c.pipes > kMaxPipes) fail("pipes: Tofino 1 has 4 pipes, got " + std::to_string(c.pipes));
  if (port_pipes > c.pipes) {
    fail("--dev-ports puts a port in pipe " + std::to_string(port_pipes - 1) + " but there are " +
         std::to_string(c.pipes) + " pipe(s) (--pipes" +
         (opt.program == "trim" ? ", or [trimming] pipelines" : "") + ")");
  }
  // fb.p4's SYNC walk reads the egress registers of the pipe it recirculates in: one pipe only.
  if (opt.program == "fb" && port_pipes > 1) {
    fail("--dev-ports spans " + std::to_string(port_pipes) +
         " pipes: fb.p4's SYNC walk reads one pipe's egress Qlength registers (as the paper's "
         "single-pipe prototype), so every port must be in pipe 0 (device ports below 128)");
  }
  const buffer::BufferConfig bc = model::buffer_config(cfg);
  c.layout = std::make_unique<buffer::BufferLayout>(bc.capacity_cells, bc.cell_bytes, bc.ports);
  c.env = model::policy_env(cfg, *c.layout);
}

// The policy object the software would run, so the parameters (defaults included) are its own.
json policy_params(const Context& c, const std::string& expected) {
  if (c.cfg.policy != expected) {
    fail("[policy] name is '" + c.cfg.policy + "': " + c.program + ".p4 is the twin of '" +
         expected + "'");
  }
  return policies::make_policy(c.cfg.policy, c.cfg.policy_params, c.env)->params();
}

uint8_t role_code(policies::ProteanRole r) {
  switch (r) {
    case policies::ProteanRole::kShort:
      return 0;
    case policies::ProteanRole::kLong:
      return 1;
    default:
      return 2;
  }
}

// Forwarding, classification and frame cells: every program's SbForward.
void forwarding(Context& c) {
  const std::string fwd = "fwd.";
  auto to_port = [&](model::MacAddress mac, uint16_t port) {
    c.add(c.ig(fwd + "forward"),
          entry({{"hdr.ethernet.dst_addr", {{"exact", hex(mac)}}}}, c.ingress + ".fwd.to_port",
                {{"port", c.dev_ports[port]},
                 {"port_index", port},
                 {"qbase", port * c.queues_per_port}}));
  };
  // A route to one port is a static MAC there; an ECMP group needs an action selector the
  // programs do not have (the software switches pick a member by flow hash).
  for (const model::RouteConfig& r : c.cfg.routes) {
    if (r.ports.size() != 1)
      fail("[[routes]] " + model::format_mac(r.mac) + ": an ECMP group of " +
           std::to_string(r.ports.size()) +
           " ports; the P4 programs forward to one port per MAC (give the route one port)");
    to_port(r.mac, r.ports[0]);
  }
  for (const model::StaticMacConfig& m : c.cfg.static_macs)
    to_port(m.mac, m.port);
  // One entry per mapped DSCP (priority 1), then each port's default class (priority 2).
  const bool one_group = c.queues_per_port == 1;  // FB's single-queue mode: one group
  auto class_data = [&](size_t id) {
    const model::ClassConfig& k = c.cfg.classes[id];
    return json{
        {"class_id", id},
        {"qid", k.queue},
        {"role", role_code(k.traffic.role)},
        {"group", (!one_group && k.traffic.group == policies::PriorityGroup::kHigh) ? 1 : 0}};
  };
  for (size_t id = 0; id < c.cfg.classes.size(); ++id) {
    for (uint8_t d : c.cfg.classes[id].dscp) {
      c.add(c.ig(fwd + "classify"), entry({{"ig_intr_md.ingress_port", {{"value", 0}, {"mask", 0}}},
                                           {"hdr.ipv4.dscp", {{"value", d}, {"mask", "0x3f"}}},
                                           {"hdr.ipv4.$valid", {{"value", 1}, {"mask", 1}}}},
                                          c.ingress + ".fwd.set_class", class_data(id), 1));
    }
  }
  for (size_t p = 0; p < c.cfg.ports.size(); ++p) {
    c.add(c.ig(fwd + "classify"),
          entry({{"ig_intr_md.ingress_port", {{"value", c.dev_ports[p]}, {"mask", "0x1ff"}}},
                 {"hdr.ipv4.dscp", {{"value", 0}, {"mask", 0}}},
                 {"hdr.ipv4.$valid", {{"value", 0}, {"mask", 0}}}},
                c.ingress + ".fwd.set_class", class_data(c.cfg.ports[p].default_class), 2));
  }
  // cells = ceil((IPv4 total length + 14) / 80), one range per cell count.
  const uint32_t max_len = 9216;
  for (uint32_t cells = 1; (cells - 1) * kCellBytes < max_len + 14; ++cells) {
    const int64_t lo =
        std::max<int64_t>(0, static_cast<int64_t>((cells - 1) * kCellBytes) + 1 - 14);
    const int64_t hi = std::min<int64_t>(65535, static_cast<int64_t>(cells * kCellBytes) - 14);
    if (hi < lo) continue;
    c.add(c.ig(fwd + "cells_of_length"),
          entry({{"hdr.ipv4.total_len", {{"low", lo}, {"high", hi}}}}, c.ingress + ".fwd.set_cells",
                {{"cells", cells}}));
  }
}

std::string mbps(uint64_t bps) {
  std::ostringstream o;
  o << static_cast<double>(bps) / 1e6 << " Mbit/s";
  return o.str();
}

std::string percent(double share) {
  std::ostringstream o;
  o.precision(share < 0.001 ? 2 : 3);
  o << share * 100 << " %";
  return o.str();
}

// What the probes take from the ports they pass: `per_port` probes of kProbeTmBytes per
// interval through each data port (dt.p4, protean.p4: one per queue), `recirc` through each
// pipe's recirculation port (fb.p4's SYNC walk: one pass per queue). A share above
// kProbeShareLimit of a port is a warning with the interval that would keep under it.
void probe_load(Context& c, json& out, uint32_t per_port, uint32_t recirc) {
  const uint64_t interval = c.cfg.buffer.probe_interval_ns;
  auto bps = [&](uint32_t packets) {
    return static_cast<double>(packets) * kProbeTmBytes * 8 * 1e9 / static_cast<double>(interval);
  };
  auto needed_us = [&](uint32_t packets, uint64_t rate) {
    return std::ceil(static_cast<double>(packets) * kProbeTmBytes * 8 * 1e6 /
                     (kProbeShareLimit * static_cast<double>(rate)));
  };
  json load = {{"probe_bytes", kProbeTmBytes},
               {"interval_ns", interval},
               {"limit_share", kProbeShareLimit},
               {"ports", json::array()}};
  if (per_port > 0) {
    load["software_twin"] = "[buffer] probe_bytes = " + std::to_string(kProbeTmBytes) +
                            ": sharebufd and sharebuf-replay then charge their probes to the ports "
                            "as the traffic manager does";
  }
  double worst = 0;
  for (size_t p = 0; p < c.cfg.ports.size() && per_port > 0; ++p) {
    const model::PortConfig& port = c.cfg.ports[p];
    json row = {{"name", port.name}, {"probes_per_interval", per_port}, {"bps", bps(per_port)}};
    if (port.rate_bps == 0) {
      row["share"] = nullptr;  // unshaped: the port's speed is the hardware's, unknown here
    } else {
      const double share = bps(per_port) / static_cast<double>(port.rate_bps);
      row["share"] = share;
      worst = std::max(worst, share);
      if (share > kProbeShareLimit) {
        out["warnings"].push_back(
            "probes take " + percent(share) + " of port '" + port.name + "' (" +
            mbps(port.rate_bps) + "; " + std::to_string(per_port) + " x " +
            std::to_string(kProbeTmBytes) + " B every " + std::to_string(interval / 1000) +
            " us): [buffer] probe_interval of at least " +
            std::to_string(static_cast<uint64_t>(needed_us(per_port, port.rate_bps))) +
            " us keeps them under " + percent(kProbeShareLimit));
      }
    }
    load["ports"].push_back(row);
  }
  if (recirc > 0) {
    const double share = bps(recirc) / static_cast<double>(kRecircPortBps);
    load["recirculation"] = {
        {"passes_per_interval", recirc}, {"bps", bps(recirc)}, {"share", share}};
    worst = std::max(worst, share);
    if (share > kProbeShareLimit) {
      out["warnings"].push_back(
          "SYNC walks take " + percent(share) + " of each recirculation port (" +
          std::to_string(recirc) + " passes of " + std::to_string(kProbeTmBytes) + " B every " +
          std::to_string(interval / 1000) + " us): [buffer] probe_interval of at " + "least " +
          std::to_string(static_cast<uint64_t>(needed_us(recirc, kRecircPortBps))) +
          " us keeps them under " + percent(kProbeShareLimit));
    }
  }
  load["max_share"] = worst;
  out["probe_load"] = load;
}

// A register's start value for `count` indices from 0: what the software's registers hold before
// the first probe (the empty buffer), so nothing is dropped before the first batch comes back.
void initial_register(json& out, const std::string& name, uint32_t count, uint64_t value,
                      const std::string& why) {
  out["registers"].push_back(
      {{"register", name}, {"first", 0}, {"count", count}, {"value", value}, {"why", why}});
}

// Probes (dt.p4, protean.p4): packet i of a batch probes queue i; egress mirrors each stamped
// probe to every pipe's recirculation port (one mirror session, a multicast group): each pipe's
// ingress decides for frames that arrive on its ports, whatever their egress port, so each keeps
// its own copy of every queue's registers and must see every probe.
void probes(Context& c, json& out) {
  for (uint32_t q = 0; q < c.num_queues; ++q) {
    const uint32_t port = q / c.queues_per_port;
    c.add(c.ig("probe_route.probe_route"),
          entry({{"hdr.pktgen.packet_id", {{"exact", q}}}}, c.ingress + ".probe_route.probe_queue",
                {{"port", c.dev_ports[port]}, {"qid", q % c.queues_per_port}, {"qindex", q}}));
  }
  out["multicast_groups"].push_back({{"id", kProbeMulticastGroup}, {"ports", c.recirc_ports()}});
  out["mirror_sessions"].push_back({{"id", kRecircSessionBase},
                                    {"direction", "egress"},
                                    {"multicast_group", kProbeMulticastGroup},
                                    {"purpose", "a stamped probe to every pipe's ingress"}});
  for (uint32_t pipe = 0; pipe < c.pipes; ++pipe) {
    c.add(c.eg("probe_stamp.recirculation_session"),
          entry({{"eg_intr_md.egress_port", {{"value", pipe << 7}, {"mask", "0x180"}}}},
                c.egress + ".probe_stamp.to_recirculation", {{"session", kRecircSessionBase}}, 1));
  }
  // One probe per queue every probe interval, from pipe 0's packet generator: kind PROBE.
  out["pktgen"] = pktgen(c, 1, c.num_queues, kSbProbe);
  out["pktgen"]["software_view"] = "[buffer] view = \"probe\", probe_interval = " +
                                   std::to_string(c.cfg.buffer.probe_interval_ns) + " ns";
  probe_load(c, out, c.queues_per_port, 0);
}

void recirculation_sessions(Context& c, json& out, const std::string& table,
                            const std::string& action) {
  for (uint32_t pipe = 0; pipe < c.pipes; ++pipe) {
    c.add(c.eg(table),
          entry({{"eg_intr_md.egress_port", {{"value", pipe << 7}, {"mask", "0x180"}}}}, action,
                {{"session", kRecircSessionBase + pipe}}, 1));
    out["mirror_sessions"].push_back(
        {{"id", kRecircSessionBase + pipe},
         {"direction", "egress"},
         {"egress_port", c.recirc_port(pipe)},
         {"purpose", "a control packet back to pipe " + std::to_string(pipe) + "'s ingress"}});
  }
}

// The log-domain tables (p4/include/log_arith.p4): every instance gets the same entries.
// The log2 and exp2 tables of `control` (one of the program's two), under their instance names.
void log_tables(Context& c, const std::string& control, const std::vector<std::string>& log2,
                const std::vector<std::string>& gradient, const std::vector<std::string>& cells) {
  auto fill = [&](const std::string& inst, const std::string& table, const std::string& action,
                  auto&& entries, auto&& row) {
    json& t = c.table("pipe." + control + "." + inst + "." + table);
    for (const auto& e : entries)
      t["entries"].push_back(row(e, control + "." + inst + "." + action));
  };
  const std::vector<policies::TernaryEntry> logs = TofinoArithmetic::log2_entries();
  for (const std::string& inst : log2) {
    fill(inst, "log2", "set_log", logs, [](const policies::TernaryEntry& e, const std::string& a) {
      return entry({{"x", {{"value", e.value}, {"mask", hex(e.mask)}}}}, a, {{"value", e.result}},
                   0);
    });
  }
  auto exact = [](const policies::ExactEntry& e, const std::string& a) {
    return entry({{"exp_key", {{"exact", e.key}}}}, a, {{"value", e.result}});
  };
  for (const std::string& inst : gradient)
    fill(inst, "exp2", "set_value", TofinoArithmetic::gradient_exp_entries(), exact);
  // The cells tables are keyed on the logarithm itself (include/log_arith.p4: a clamp step would
  // cost protean.p4 a stage): the software's keys, then up to twice as many holding the last
  // value, which is the software's clamp (TofinoArithmetic::exp_cells).
  std::vector<policies::ExactEntry> cell_entries = TofinoArithmetic::cells_exp_entries();
  const policies::ExactEntry last = cell_entries.back();
  for (uint32_t key = TofinoArithmetic::kCellsExpKeys; key < 2 * TofinoArithmetic::kCellsExpKeys;
       ++key)
    cell_entries.push_back(policies::ExactEntry{.key = key, .result = last.result});
  for (const std::string& inst : cells)
    fill(inst, "exp2", "set_value", cell_entries,
         [](const policies::ExactEntry& e, const std::string& a) {
           return entry({{"t", {{"exact", e.key}}}}, a, {{"value", e.result}});
         });
}

void dt(Context& c, json& out) {
  const json params = policy_params(c, "dt");
  const double alpha = params["alpha"].get<double>();
  forwarding(c);
  probes(c, out);
  log_tables(c, c.ingress, {"log2_rem"}, {}, {"exp_threshold"});
  initial_register(out, c.ig("rem"), 1, c.cfg.buffer.capacity_cells,
                   "Rem before the first probe: the empty buffer (each probe then takes its "
                   "queue's change off)");
  const policies::AlphaTable alphas = policies::resolve_alphas(c.env, alpha);
  for (size_t id = 0; id < c.cfg.classes.size(); ++id) {
    c.add(c.ig("class_alpha"), entry({{"md.class_id", {{"exact", id}}}}, c.ingress + ".set_alpha",
                                     {{"log_value", TofinoArithmetic::log_constant(alphas[id])}}));
  }
}

void protean(Context& c, json& out) {
  const json params = policy_params(c, "protean");
  const double beta = params["beta"].get<double>();
  const int shift = TofinoArithmetic::beta_shift(beta);
  if (shift < 0) {
    fail("[policy] beta is " + std::to_string(beta) +
         ": protean.p4 computes the EWMA with shifts, so beta must be 1, 1/2, 1/4, ...");
  }
  for (const model::ClassConfig& k : c.cfg.classes) {
    if (k.traffic.alpha) {
      fail("[[classes]] '" + k.traffic.name +
           "' sets its own alpha: protean.p4 holds every class to the policy's alpha_incast and "
           "alpha_long (leave the class's alpha out)");
    }
  }
  forwarding(c);
  probes(c, out);
  // Algorithm 2's gradient in egress, its product with Rem in ingress (p4/protean.p4).
  log_tables(c, c.egress, {"log2_dq", "log2_dt", "log2_g"}, {"exp_gradient"}, {});
  log_tables(c, c.ingress, {"log2_rem"}, {}, {"exp_threshold", "exp_long"});
  c.set_default(
      c.eg("gradient_params"), c.egress + ".set_params",
      {{"buildup", std::lround(params["buildup"].get<double>() * TofinoArithmetic::kOne)},
       {"log_incast", TofinoArithmetic::log_constant(params["alpha_incast"].get<double>())}});
  c.set_default(c.ig("protean_params"), c.ingress + ".set_params",
                {{"log_long", TofinoArithmetic::log_constant(params["alpha_long"].get<double>())}});
  for (uint32_t q = 0; q < c.num_queues; ++q) {
    const uint32_t port = q / c.queues_per_port;
    c.add(c.eg("queue_rate"), entry({{"hdr.sb.qindex", {{"exact", q}}}}, c.egress + ".set_rate",
                                    {{"log_cells_per_ns", policies::log_rate_cells_per_ns(
                                                              c.env.rate_cells_per_s(port))}}));
  }
  // Before the first probe: Rem = B, and the thresholds the software holds an empty buffer to.
  const TofinoArithmetic arith;
  const uint32_t b = c.cfg.buffer.capacity_cells;
  initial_register(out, c.ig("rem"), 1, b,
                   "Rem before the first probe: the empty buffer (each probe then takes its "
                   "queue's change off)");
  initial_register(
      out, c.ig("incast_thr"), c.num_queues,
      arith.scale(TofinoArithmetic::log_constant(params["alpha_incast"].get<double>()), b),
      "alpha_incast x B: an empty queue's threshold in the empty buffer");
  initial_register(
      out, c.ig("long_thr"), 1,
      arith.scale(TofinoArithmetic::log_constant(params["alpha_long"].get<double>()), b),
      "alpha_long x B in the empty buffer");
  out["compile"]["defines"]["SB_BETA_SHIFT"] = shift;
  out["software_twin"] =
      "[policy] protean with arithmetic = \"tofino\", sync = \"probe\"; [buffer] "
      "view = \"probe\"";
}

void fb(Context& c, json& out) {
  const json params = policy_params(c, "fb");
  if (params["gamma"] != "share")
    fail("[policy] gamma = \"measured\": fb.p4 uses the scheduler share (gamma = \"share\")");
  for (const model::PortConfig& p : c.cfg.ports) {
    if (c.queues_per_port > 1 && p.scheduler != model::SchedulerKind::kRoundRobin) {
      fail("[[ports]] '" + p.name + "' scheduler is '" + std::string(to_string(p.scheduler)) +
           "': fb.p4 takes gamma = 1/n (round robin, scheduler = \"rr\")");
    }
  }
  forwarding(c);
  const bool one_group = c.queues_per_port == 1;
  // Per queue: port, group (its first class's), last of its port.
  uint32_t per_group[2] = {0, 0};
  for (uint32_t q = 0; q < c.num_queues; ++q) {
    const bool high = !one_group && c.env.group_of_class(c.env.class_of_queue(q)) ==
                                        policies::PriorityGroup::kHigh;
    ++per_group[high ? 1 : 0];
    c.add(c.ig("queue_info"),
          entry({{"hdr.sb.qindex", {{"exact", q}}}}, c.ingress + ".set_queue",
                {{"port_index", q / c.queues_per_port},
                 {"group", high ? 1 : 0},
                 {"last_of_port", q % c.queues_per_port == c.queues_per_port - 1}}));
  }
  // The Shift table: alpha / (N_p x n) as the nearest power of two. The data pass adds the
  // arriving queue to both counts when its Qlength is 0, and a SYNC walk writes each queue's
  // Qlength as it passes but the counts only at its end: a queue the last walk counted and this
  // one has found empty is counted twice, one above the most the counts can be. Those keys get
  // the entry of the most (a miss would be the default no_room: a drop for nothing). And a queue
  // that filled after the last walk, with no other congested, reads counts of 0 (Qlength is
  // written at every dequeue, the counts by the walk): counted as 1, as the software's
  // max(1, ...) does (policies/fb_factors.cpp); p4testgen found the miss
  // (tests/p4/testgen_check.py).
  const policies::AlphaTable alphas = policies::resolve_group_alphas(
      c.env, params["alpha_high"].get<double>(), params["alpha_low"].get<double>());
  size_t entries = 0;
  for (size_t id = 0; id < c.cfg.classes.size(); ++id) {
    const bool high =
        !one_group && c.cfg.classes[id].traffic.group == policies::PriorityGroup::kHigh;
    const uint32_t max_np = std::max<uint32_t>(1, per_group[high ? 1 : 0]);
    for (uint32_t n_p = 0; n_p <= max_np + 1; ++n_p) {
      for (uint32_t n = 0; n <= c.queues_per_port + 1; ++n) {
        const double counted =
            std::max(1u, std::min(n_p, max_np)) * std::max(1u, std::min(n, c.queues_per_port));
        const int k = static_cast<int>(std::lround(std::log2(counted / alphas[id])));
        if (k < -kFbMaxLeftShift) {
          fail("[[classes]] '" + c.cfg.classes[id].traffic.name + "': alpha " +
               std::to_string(alphas[id]) + " needs a left shift of " + std::to_string(-k) +
               "; fb.p4 has at most " + std::to_string(kFbMaxLeftShift));
        }
        const std::string action = k > kFbMaxRightShift ? "no_room"
                                   : k >= 0             ? "shift_right_" + std::to_string(k)
                                                        : "shift_left_" + std::to_string(-k);
        c.add(c.ig("fb_shift"), entry({{"md.class_id", {{"exact", id}}},
                                       {"n_p", {{"exact", n_p}}},
                                       {"n", {{"exact", n}}}},
                                      c.ingress + "." + action, json::object()));
        if (++entries > kFbShiftEntries) {
          fail("fb.p4's Shift table needs more than " + std::to_string(kFbShiftEntries) +
               " entries (classes x congested queues x queues per port): fewer classes or queues");
        }
      }
    }
  }
  c.set_default(c.ig("fb_params"), c.ingress + ".set_params",
                {{"b", c.cfg.buffer.capacity_cells},
                 {"last", c.num_queues - 1},
                 {"recirc", c.recirc_port(0)}});
  initial_register(out, c.ig("remaining"), 1, c.cfg.buffer.capacity_cells,
                   "B - occupied before the first SYNC walk: the empty buffer");
  // One SYNC walk per interval: ingress makes the zero packet a SYNC and recirculates it once
  // per queue.
  out["pktgen"] = pktgen(c, 2, 1, 0);
  probe_load(c, out, 0, c.num_queues);
}

void trim(Context& c, json& out) {
  const model::TrimConfig& t = c.cfg.trim;
  bool any = false;
  for (const model::ClassConfig& k : c.cfg.classes) {
    if (k.overflow == model::OverflowAction::kReturnToSender)
      fail("[[classes]] '" + k.traffic.name +
           "' overflow = \"return-to-sender\": trim.p4 trims "
           "toward the receiver only");
    any = any || k.overflow == model::OverflowAction::kTrim;
  }
  if (!any) fail("[[classes]]: no class has overflow = \"trim\"; trim.p4 would trim nothing");
  // The mirror sessions cut every packet at trim_size: it must hold the longest headers the
  // program parses (Ethernet, an 802.1Q tag, IPv4 and TCP with their options), as the software
  // never cuts into a header.
  if (t.size < kLongestHeadersBytes || t.size > 1500) {
    fail("[trimming] trim_size: " + std::to_string(kLongestHeadersBytes) +
         " to 1500 bytes for trim.p4 (its mirror sessions cut every packet at that length, which "
         "must hold Ethernet, 802.1Q, IPv4 and TCP headers with options: 14 + 4 + 60 + 60)");
  }
  if (std::max(t.t0_ns, t.t1_ns) > (1u << 31))
    fail("[trimming] t0, t1: the 32-bit nanosecond registers hold at most 2.1 s");
  forwarding(c);
  for (size_t id = 0; id < c.cfg.classes.size(); ++id) {
    if (c.cfg.classes[id].overflow == model::OverflowAction::kTrim)
      c.add(c.ig("class_overflow"),
            entry({{"md.class_id", {{"exact", id}}}}, c.ingress + ".trims", json::object()));
  }
  c.set_default(
      c.ig("trim_params"), c.ingress + ".set_params",
      {{"t0_ns", t.t0_ns}, {"t1_ns", std::max(t.t0_ns, t.t1_ns)}, {"notify", kNotifySession}});
  // The t0/t1 registers' window on the wrapping 32-bit clock (trim.p4): the longest period.
  out["compile"]["defines"]["SB_T_WINDOW_NS"] = std::max<uint64_t>({1, t.t0_ns, t.t1_ns});
  out["meters"] = json::array();
  for (size_t p = 0; p < c.cfg.ports.size(); ++p) {
    const model::PortConfig& port = c.cfg.ports[p];
    const uint64_t line = port.rate_bps != 0 ? port.rate_bps : t.line_rate_bps;
    if (line == 0) {
      fail("[[ports]] '" + port.name +
           "' has no rate: trim.p4's meters need a line rate (the "
           "port's rate or [trimming] line_rate)");
    }
    const uint32_t session = kTrimSessionBase + static_cast<uint32_t>(p);
    c.add(c.ig("trim_session"), entry({{"md.port_index", {{"exact", p}}}},
                                      c.ingress + ".set_trim_session", {{"session", session}}));
    c.add(c.ig("header_queue"),
          entry({{"hdr.sb.port", {{"exact", p}}}}, c.ingress + ".to_header_queue",
                {{"port", c.dev_ports[p]}, {"qid", port.trim_queue}}));
    const int dscp = port.trim_dscp_toward >= 0 ? port.trim_dscp_toward : t.dscp;
    const uint32_t total_len = t.size - 14;
    c.add(c.eg("trimmed_rewrite"),
          dscp >= 0 ? entry({{"md.meta.port_index", {{"exact", p}}}}, c.egress + ".rewrite",
                            {{"dscp", dscp}, {"total_len", total_len}})
                    : entry({{"md.meta.port_index", {{"exact", p}}}}, c.egress + ".keep_dscp",
                            {{"total_len", total_len}}));
    out["mirror_sessions"].push_back(
        {{"id", session},
         {"direction", "ingress"},
         {"egress_port", c.dev_ports[p]},
         {"queue", port.trim_queue},
         {"max_pkt_len", t.size},
         {"purpose", "trim at ingress into " + port.name + "'s header queue"}});
    // As IngressPortState meters (model/ingress_meters.cpp): pessimistic at the configured
    // share (the paper's 25 % by default), half-pessimistic at twice it, at most the line rate.
    const double pessimistic = t.pessimistic_share;
    for (const auto& [name, share] : {std::pair{"meter_optimistic", 1.0},
                                      {"meter_halftimistic", std::min(1.0, 2 * pessimistic)},
                                      {"meter_pessimistic", pessimistic}}) {
      const uint64_t kbps = static_cast<uint64_t>(static_cast<double>(line) * share / 1000);
      out["meters"].push_back({{"meter", c.ig(name)},
                               {"index", p},
                               {"cir_kbps", kbps},
                               {"pir_kbps", kbps},
                               {"cbs_bytes", t.meter_burst_bytes},
                               {"pbs_bytes", t.meter_burst_bytes}});
    }
  }
  recirculation_sessions(c, out, "update_session", c.egress + ".set_update_session");
  for (json& s : out["mirror_sessions"]) {
    if (s["direction"] == "egress") s["max_pkt_len"] = t.size + kSbHeaderBytes;
  }
  out["multicast_groups"].push_back({{"id", kNotifyMulticastGroup}, {"ports", c.recirc_ports()}});
  out["mirror_sessions"].push_back({{"id", kNotifySession},
                                    {"direction", "ingress"},
                                    {"multicast_group", kNotifyMulticastGroup},
                                    {"max_pkt_len", 64},
                                    {"purpose", "a NOTIFY to every pipe's recirculation port"}});
  json dod = json::array();
  for (uint32_t pipe = 0; pipe < c.pipes; ++pipe)
    dod.push_back({{"pipe", pipe}, {"deflect_on_drop_port", c.recirc_port(pipe)}});
  out["tm"]["deflect_on_drop"] = dod;
  out["software_twin"] =
      "[trimming] mode = \"tofino-approx\", pipelines = " + std::to_string(c.pipes);
}

}  // namespace

json generate_p4_tables(const model::SwitchConfig& config, const P4TablesOptions& options) {
  static const std::map<std::string, std::pair<std::string, std::string>> controls = {
      {"dt", {"DtIngress", "DtEgress"}},
      {"protean", {"ProteanIngress", "ProteanEgress"}},
      {"fb", {"FbIngress", "FbEgress"}},
      {"trim", {"TrimIngress", "TrimEgress"}}};
  const auto it = controls.find(options.program);
  if (it == controls.end())
    fail("unknown program '" + options.program + "' (dt, protean, fb, trim)");
  Context c{config, options.program, it->second.first, it->second.second};
  try {
    check_hardware(c, options);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  json out = {{"program", options.program},
              {"p4", "p4/" + options.program + ".p4"},
              {"config", config.source},
              {"compile", {{"defines", json::object()}}},
              {"pipes", c.pipes},
              {"ports", json::array()},
              {"mirror_sessions", json::array()},
              {"multicast_groups", json::array()},
              {"registers", json::array()},
              {"warnings", json::array()}};
  for (size_t p = 0; p < config.ports.size(); ++p)
    out["ports"].push_back({{"name", config.ports[p].name},
                            {"dev_port", c.dev_ports[p]},
                            {"index", p},
                            {"queues", config.ports[p].num_queues},
                            {"rate_bps", config.ports[p].rate_bps}});
  if (options.program == "dt") dt(c, out);
  if (options.program == "protean") protean(c, out);
  if (options.program == "fb") fb(c, out);
  if (options.program == "trim") trim(c, out);
  out["tables"] = std::move(c.tables);
  return out;
}

}  // namespace sharebuf::p4

#include "config/switch_config_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

#include "common/bounded_input.h"
#include "common/units.h"
#include "config/toml_reader.h"
#include "model/frame_parser.h"
#include "model/mac_table.h"
#include "model/trim_params.h"
#include "model/view_params.h"
#include "policies/policy.h"
#include "policies/registry.h"

namespace sharebuf::config {
using common::parse_duration_ns;
using common::parse_rate_bps;
using common::parse_size_cells;

namespace {

using model::ClassConfig;
using model::PortConfig;
using model::RouteConfig;
using model::StaticMacConfig;
using model::SwitchConfig;

std::pair<uint32_t, uint8_t> parse_prefix(TableReader& r, std::string_view key) {
  const auto s = r.string(key);
  const std::string text = *s;
  const auto slash = text.find('/');
  const std::string addr = text.substr(0, slash);
  int prefix = 32;
  if (slash != std::string::npos) {
    try {
      prefix = std::stoi(text.substr(slash + 1));
    } catch (...) {
      prefix = -1;
    }
  }
  uint32_t v = 0;
  int parts = 0;
  std::stringstream in(addr);
  for (std::string part; std::getline(in, part, '.');) {
    int octet = -1;
    try {
      octet = std::stoi(part);
    } catch (...) {
    }
    if (octet < 0 || octet > 255) parts = 99;
    v = (v << 8) | static_cast<uint32_t>(octet & 0xff);
    ++parts;
  }
  if (parts != 4 || prefix < 0 || prefix > 32) {
    r.fail(key, "must be an IPv4 address or prefix like \"198.18.0.0/24\", got '" + text + "'");
  }
  return {v, static_cast<uint8_t>(prefix)};
}

double machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

void read_buffer(TableReader& r, SwitchConfig& sw) {
  sw.buffer.cell_bytes = static_cast<uint32_t>(r.integer("cell_bytes", 16, 16384).value_or(80));
  const uint32_t cell = sw.buffer.cell_bytes;
  const auto size =
      r.with_unit("size", [cell](std::string_view s) { return parse_size_cells(s, cell); });
  if (!size) r.fail_table("key 'size' is required (e.g. size = \"21000 cells\" or \"1.6MB\")");
  if (*size == 0 || *size > (1u << 30)) r.fail("size", "must be between 1 cell and 2^30 cells");
  // The pool holds every cell's data and 40 bytes of bookkeeping (descriptor, links, free list):
  // at most half of this machine's memory, so a typo cannot take the machine down.
  const double need = static_cast<double>(*size) * (cell + 40.0);
  const double memory = machine_memory_bytes();
  if (memory > 0 && need > memory / 2) {
    std::ostringstream msg;
    msg.precision(3);
    msg << "a buffer of " << *size << " cells of " << cell << " B takes " << need / (1 << 30)
        << " GiB with its bookkeeping, more than half of this machine's " << memory / (1 << 30)
        << " GiB";
    r.fail("size", msg.str());
  }
  sw.buffer.capacity_cells = static_cast<uint32_t>(*size);
  // The view keys, as model/view_params.h declares them.
  sw.buffer.view_mode = *model::view_mode(r.choice("view", model::view_spec("view")));
  if (const auto probe = r.with_unit("probe_interval", parse_duration_ns)) {
    if (const auto bad = model::view_duration_error("probe_interval", *probe))
      r.fail("probe_interval", *bad);
    sw.buffer.probe_interval_ns = *probe;
  }
  if (const auto delay = r.with_unit("probe_delay", parse_duration_ns)) {
    auto bad = model::view_duration_error("probe_delay", *delay);
    if (!bad) bad = buffer::ProbeRegisters::check_timing(sw.buffer.probe_interval_ns, *delay);
    if (bad) r.fail("probe_delay", *bad);
    sw.buffer.probe_delay_ns = *delay;
  }
  sw.buffer.probe_path = *model::probe_path(r.choice("probe_path", model::view_spec("probe_path")));
  // What each probe takes from its port's rate while the port sends (model/probe_charge.h):
  // dt.p4's and protean.p4's probes weigh 34 bytes in Tofino's traffic manager.
  sw.buffer.probe_bytes = static_cast<uint32_t>(r.integer("probe_bytes", 0, 9216).value_or(0));
  r.finish();
}

ClassConfig read_class(TableReader& r, uint32_t cell_bytes) {
  ClassConfig c;
  const auto name = r.string("name");
  if (!name || name->empty()) r.fail_table("key 'name' is required");
  c.traffic.name = *name;
  c.queue = static_cast<uint32_t>(r.integer("queue", 0, 63).value_or(0));
  c.traffic.alpha = r.number("alpha", 1.0 / 1024, 1024);
  c.traffic.group = r.choice("group", "low", {"low", "high"}) == "high"
                        ? buffer::PriorityGroup::kHigh
                        : buffer::PriorityGroup::kLow;
  const std::string role = r.choice("role", "incast", {"short", "long", "incast"});
  c.traffic.role = role == "short"  ? policies::ProteanRole::kShort
                   : role == "long" ? policies::ProteanRole::kLong
                                    : policies::ProteanRole::kIncast;
  const auto k = r.with_unit("ecn_threshold", [cell_bytes](std::string_view s) {
    return parse_size_cells(s, cell_bytes);
  });
  c.ecn_threshold_cells = static_cast<uint32_t>(k.value_or(0));
  for (int64_t d : r.integer_list("dscp", 0, 63))
    c.dscp.push_back(static_cast<uint8_t>(d));
  for (int64_t p : r.integer_list("pcp", 0, 7))
    c.pcp.push_back(static_cast<uint8_t>(p));
  c.overflow = *model::overflow_action(
      r.choice("overflow", model::trim_spec(model::kTrimClassParams, "overflow")));
  const auto rt = r.with_unit("return_threshold", [cell_bytes](std::string_view s) {
    return parse_size_cells(s, cell_bytes);
  });
  if (rt && c.overflow != model::OverflowAction::kReturnToSender)
    r.fail("return_threshold", "needs overflow = \"return-to-sender\"");
  c.return_threshold_cells = static_cast<uint32_t>(rt.value_or(0));
  r.finish();
  return c;
}

uint8_t class_index(TableReader& r, std::string_view key, const SwitchConfig& sw) {
  const auto name = r.string(key);
  for (size_t i = 0; i < sw.classes.size(); ++i) {
    if (sw.classes[i].traffic.name == *name) return static_cast<uint8_t>(i);
  }
  std::string known;
  for (const auto& c : sw.classes)
    known += (known.empty() ? "" : ", ") + c.traffic.name;
  r.fail(key, "no class named '" + *name + "' (classes: " + known + ")");
}

PortConfig read_port(TableReader& r, const SwitchConfig& sw) {
  PortConfig p;
  const auto name = r.string("interface");
  if (!name || name->empty()) r.fail_table("key 'interface' is required");
  if (name->size() >= 16) r.fail("interface", "interface names are at most 15 characters");
  p.name = *name;
  p.rate_bps = r.with_unit("rate", parse_rate_bps).value_or(0);
  p.num_queues = static_cast<uint32_t>(r.integer("queues", 1, 64).value_or(1));
  const std::string sched = r.choice("scheduler", "rr", {"sp", "rr", "drr", "drr_active"});
  p.scheduler = sched == "sp"           ? model::SchedulerKind::kStrictPriority
                : sched == "drr"        ? model::SchedulerKind::kDrr
                : sched == "drr_active" ? model::SchedulerKind::kDrrActive
                                        : model::SchedulerKind::kRoundRobin;
  for (int64_t w : r.integer_list("weights", 1, 1000))
    p.weights.push_back(static_cast<uint32_t>(w));
  if (!p.weights.empty() && p.weights.size() != p.num_queues) {
    r.fail("weights", "lists " + std::to_string(p.weights.size()) + " weights for " +
                          std::to_string(p.num_queues) + " queues");
  }
  if (r.table().get("default_class") != nullptr)
    p.default_class = class_index(r, "default_class", sw);
  p.rx_ring_frames = static_cast<uint32_t>(r.integer("rx_ring_frames", 64, 1 << 16).value_or(8192));
  p.tx_batch = static_cast<uint32_t>(r.integer("tx_batch", 1, 64).value_or(64));
  p.storm_pps = static_cast<uint64_t>(r.integer("storm_pps", 0, 100'000'000).value_or(0));
  using model::kTrimPortParams;
  using model::trim_spec;
  p.trim_queue = static_cast<uint32_t>(
      r.integer("trim_queue", trim_spec(kTrimPortParams, "trim_queue")).value_or(0));
  if (p.trim_queue >= p.num_queues) {
    r.fail("trim_queue", "is queue " + std::to_string(p.trim_queue) + " but this port has " +
                             std::to_string(p.num_queues) +
                             " queue(s) (queues are numbered from 0)");
  }
  p.trim_dscp_toward = static_cast<int>(
      r.integer("trim_dscp_toward", trim_spec(kTrimPortParams, "trim_dscp_toward")).value_or(-1));
  p.fabric = r.choice("role", "edge", {"edge", "fabric"}) == "fabric";
  r.finish();
  return p;
}

// [switch]; its daemon keys (the stats file) are the caller's.
void read_switch(const toml::table& t, const std::string& file, SwitchConfig& sw,
                 const DaemonSections* daemon) {
  TableReader r(t, file, "[switch]");
  sw.name = r.string("name").value_or(sw.name);
  if (sw.name.empty() || sw.name.find('/') != std::string::npos) {
    r.fail("name", "must be a non-empty name without '/'");
  }
  sw.mac_ageing_ns = r.with_unit("mac_ageing", parse_duration_ns).value_or(sw.mac_ageing_ns);
  sw.mac_table_size =
      static_cast<uint32_t>(r.integer("mac_table_size", 16, 1 << 20).value_or(4096));
  sw.drain_on_stop = r.choice("on_stop", "drop", {"drop", "drain"}) == "drain";
  sw.rx_mode = r.choice("rx_mode", "per-port", {"per-port", "per-cpu"}) == "per-cpu"
                   ? model::RxMode::kPerCpu
                   : model::RxMode::kPerPort;
  sw.rx_io = r.choice("rx_io", "af_packet", {"af_packet", "af_xdp"}) == "af_xdp"
                 ? model::RxIo::kAfXdp
                 : model::RxIo::kAfPacket;
  if (sw.rx_mode == model::RxMode::kPerCpu && sw.rx_io == model::RxIo::kAfXdp)
    r.fail("rx_io",
           "\"af_xdp\" cannot be combined with rx_mode \"per-cpu\" (its lanes are TPACKET "
           "rings in a fanout group)");
  sw.tx_io = r.choice("tx_io", "af_packet", {"af_packet", "af_xdp"}) == "af_xdp"
                 ? model::TxIo::kAfXdp
                 : model::TxIo::kAfPacket;
  if (sw.tx_io == model::TxIo::kAfXdp && sw.rx_io != model::RxIo::kAfXdp)
    r.fail("tx_io",
           "\"af_xdp\" sends through the port's AF_XDP socket and needs rx_io = \"af_xdp\"");
  sw.xdp_shared_umem = r.choice("af_xdp_umem", "shared", {"shared", "per-socket"}) == "shared";
  sw.rx_threads = static_cast<uint32_t>(r.integer("rx_threads", 0, 64).value_or(0));
  if (sw.rx_mode == model::RxMode::kPerCpu && sw.rx_threads != 0)
    r.fail("rx_threads",
           "applies to rx_mode \"per-port\"; with \"per-cpu\" there is one RX "
           "worker per CPU");
  // poll_mode and rx_busy_poll: a file from before poll_mode with rx_busy_poll > 0 meant
  // spin-then-block, which is "adaptive"; given together they must agree.
  const std::optional<uint64_t> spin = r.with_unit("rx_busy_poll", parse_duration_ns);
  if (spin && *spin > 1'000'000'000) r.fail("rx_busy_poll", "must be at most 1s");
  const std::string poll_mode = r.choice("poll_mode", spin && *spin != 0 ? "adaptive" : "interrupt",
                                         {"interrupt", "adaptive", "busy-poll"});
  if (poll_mode == "adaptive") {
    sw.poll_mode = model::PollMode::kAdaptive;
    sw.rx_busy_poll_ns = spin.value_or(model::kAdaptiveSpinDefaultNs);
    if (sw.rx_busy_poll_ns == 0)
      r.fail("rx_busy_poll", "is adaptive polling's spin time and must be above 0");
  } else if (spin && *spin != 0) {
    r.fail("rx_busy_poll", "is the spin time of poll_mode \"adaptive\"; poll_mode \"" + poll_mode +
                               "\" " + (poll_mode == "interrupt" ? "never spins" : "never blocks"));
  } else {
    sw.poll_mode =
        poll_mode == "busy-poll" ? model::PollMode::kBusyPoll : model::PollMode::kInterrupt;
  }
  sw.rx_park_after_ns =
      r.with_unit("rx_park_after", parse_duration_ns).value_or(sw.rx_park_after_ns);
  if (sw.rx_park_after_ns > 10'000'000'000ull) r.fail("rx_park_after", "must be at most 10s");
  sw.realtime_priority = static_cast<int>(r.integer("realtime_priority", 0, 99).value_or(0));
  sw.port_lock_dir = r.string("port_lock_dir").value_or(sw.port_lock_dir);
  if (sw.port_lock_dir.empty() || sw.port_lock_dir.front() != '/') {
    r.fail("port_lock_dir", "must be an absolute directory path");
  }
  if (daemon == nullptr) {
    r.get("stats_file");  // sharebufd's; whoever builds a switch without it ignores it
  } else if (daemon->switch_keys) {
    daemon->switch_keys(r);
  }
  r.finish();
}

// [policy]: the name, and the parameters as the policy's declared table will read them.
void read_policy(const toml::table& t_ref, const std::string& file, SwitchConfig& sw) {
  const toml::table* t = &t_ref;
  sw.policy_params.origin = file + " [policy]";
  for (const auto& [k, v] : *t) {
    const std::string key(k.str());
    if (key == "name") {
      if (!v.is_string()) {
        throw ConfigError(location(file, v.source()) + ": [policy] key 'name': must be a string");
      }
      sw.policy = v.as_string()->get();
      continue;
    }
    sw.policy_params.values[key] = to_json(v);
    sw.policy_params.key_origins[key] = location(file, v.source());
  }
  if (policies::find_policy(sw.policy) == nullptr) {
    std::string known;
    for (const auto& p : policies::builtin_policies())
      known += (known.empty() ? "" : ", ") + std::string(p.name);
    throw ConfigError(location(file, t->get("name") ? t->get("name")->source() : t->source()) +
                      ": [policy] key 'name': unknown policy '" + sw.policy +
                      "' (known policies: " + known + ")");
  }
}

// [[classes]]: at least one (the default class when none is given).
void read_classes(TableReader& top, const std::string& file, SwitchConfig& sw) {
  int index = 0;
  for (const toml::table* t : tables_of(top, "classes")) {
    TableReader r(*t, file, "[[classes]] #" + std::to_string(++index));
    sw.classes.push_back(read_class(r, sw.buffer.cell_bytes));
    for (size_t i = 0; i + 1 < sw.classes.size(); ++i) {
      if (sw.classes[i].traffic.name == sw.classes.back().traffic.name) {
        r.fail("name", "class '" + sw.classes.back().traffic.name + "' is defined twice");
      }
    }
  }
  if (sw.classes.empty()) sw.classes.push_back(ClassConfig{});
  if (sw.classes.size() > 255) top.fail("classes", "at most 255 classes");
}

// [classify] and its [[classify.rules]].
void read_classify(const toml::table& t, const std::string& file, SwitchConfig& sw) {
  TableReader r(t, file, "[classify]");
  const std::string mode = r.choice("mode", "dscp", {"dscp", "pcp", "rules"});
  sw.classify = mode == "pcp"     ? model::ClassifyMode::kPcp
                : mode == "rules" ? model::ClassifyMode::kRules
                                  : model::ClassifyMode::kDscp;
  int n = 0;
  for (const toml::table* rt : tables_of(r, "rules")) {
    TableReader rr(*rt, file, "[[classify.rules]] #" + std::to_string(++n));
    model::RuleConfig rule;
    if (rr.table().get("proto") != nullptr) {
      const std::string proto = rr.choice("proto", "", {"tcp", "udp"});
      rule.proto = proto == "tcp" ? model::kIpProtoTcp : model::kIpProtoUdp;
    }
    if (rr.table().get("src") != nullptr)
      std::tie(rule.src_ip, rule.src_prefix) = parse_prefix(rr, "src");
    if (rr.table().get("dst") != nullptr)
      std::tie(rule.dst_ip, rule.dst_prefix) = parse_prefix(rr, "dst");
    if (auto v = rr.integer("src_port", 0, 65535)) rule.src_port = static_cast<uint16_t>(*v);
    if (auto v = rr.integer("dst_port", 0, 65535)) rule.dst_port = static_cast<uint16_t>(*v);
    if (rr.table().get("class") == nullptr) rr.fail_table("key 'class' is required");
    rule.class_id = class_index(rr, "class", sw);
    rr.finish();
    sw.rules.push_back(rule);
  }
  r.finish();
}

// [trimming]: read through the declared keys (model/trim_params.h), as trim.set reads its
// arguments.
void read_trimming(const toml::table& t, const std::string& file, SwitchConfig& sw) {
  policies::Params params;
  params.origin = file + " [trimming]";
  for (const auto& [k, v] : t) {
    params.values[std::string(k.str())] = to_json(v);
    params.key_origins[std::string(k.str())] = location(file, v.source());
  }
  const policies::ParamReader r(policies::ParamReader::Subject{"[trimming]"}, params,
                                model::kTrimParams);
  model::read_trim_params(r, sw.trim, false);
  if (r.has("pipelines")) {
    const uint64_t pipelines = r.integer("pipelines");
    if (sw.rx_mode == model::RxMode::kPerCpu)
      r.fail("pipelines",
             "cannot be set with [switch] rx_mode = \"per-cpu\": an ingress "
             "pipeline is an RX worker, and there is one per CPU");
    if (sw.rx_threads != 0 && sw.rx_threads != pipelines)
      r.fail("pipelines", "is " + std::to_string(pipelines) + " but [switch] rx_threads is " +
                              std::to_string(sw.rx_threads) +
                              ": an ingress pipeline is an RX worker; set one of them");
    sw.rx_threads = static_cast<uint32_t>(pipelines);
  }
}

// [[ports]], then what needs both the ports and [trimming]: the header reserve fits in the
// buffer, tofino-approx has a line rate for every port.
void read_ports(TableReader& top, const toml::table* trimming, const std::string& file,
                SwitchConfig& sw) {
  int index = 0;
  for (const toml::table* t : tables_of(top, "ports")) {
    TableReader r(*t, file, "[[ports]] #" + std::to_string(++index));
    sw.ports.push_back(read_port(r, sw));
    for (size_t i = 0; i + 1 < sw.ports.size(); ++i) {
      if (sw.ports[i].name == sw.ports.back().name) {
        r.fail("interface", "interface '" + sw.ports.back().name + "' is listed twice");
      }
    }
    for (const ClassConfig& c : sw.classes) {
      if (c.queue >= sw.ports.back().num_queues) {
        r.fail("queues", "class '" + c.traffic.name + "' uses queue " + std::to_string(c.queue) +
                             " but this port has " + std::to_string(sw.ports.back().num_queues) +
                             " queue(s) (queues are numbered from 0)");
      }
    }
  }
  if (sw.ports.empty()) top.fail_table("at least one [[ports]] table is required");
  if (sw.ports.size() > 64) top.fail("ports", "at most 64 ports");
  if (const uint64_t reserve = model::header_reserve_cells(sw);
      reserve * sw.ports.size() > sw.buffer.capacity_cells) {
    const std::string why =
        std::to_string(sw.trim.header_reserve) + " headers of " + std::to_string(sw.trim.size) +
        " bytes (" + std::to_string(reserve) + " cells) on each of " +
        std::to_string(sw.ports.size()) + " ports do not fit in the buffer's " +
        std::to_string(sw.buffer.capacity_cells) + " cells: lower [trimming] header_reserve";
    if (trimming != nullptr) TableReader(*trimming, file, "[trimming]").fail("header_reserve", why);
    top.fail_table(why);
  }
  if (sw.trim.tofino_approx && sw.trim.line_rate_bps == 0) {
    for (const PortConfig& p : sw.ports) {
      if (p.rate_bps == 0) {
        TableReader r(*trimming, file, "[trimming]");
        r.fail("mode", "\"tofino-approx\" meters each port at its line rate, but port '" + p.name +
                           "' has no rate: give it one or set [trimming] line_rate");
      }
    }
  }
}

// The table's required `mac` key, a MAC address.
model::MacAddress mac_key(TableReader& r) {
  const auto mac = r.string("mac");
  if (!mac) r.fail_table("key 'mac' is required");
  const auto parsed = model::parse_mac(*mac);
  if (!parsed) r.fail("mac", "must look like 02:00:00:00:00:01, got '" + *mac + "'");
  return *parsed;
}

// The index of the [[ports]] table with interface `name` (named by `key` when there is none).
uint16_t port_index(TableReader& r, std::string_view key, const std::string& name,
                    const SwitchConfig& sw) {
  const auto it = std::find_if(sw.ports.begin(), sw.ports.end(),
                               [&](const PortConfig& p) { return p.name == name; });
  if (it == sw.ports.end()) r.fail(key, "no port with interface '" + name + "'");
  return static_cast<uint16_t>(it - sw.ports.begin());
}

// [[static_macs]]: MAC -> one of the [[ports]].
void read_static_macs(TableReader& top, const std::string& file, SwitchConfig& sw) {
  int index = 0;
  for (const toml::table* t : tables_of(top, "static_macs")) {
    TableReader r(*t, file, "[[static_macs]] #" + std::to_string(++index));
    const model::MacAddress mac = mac_key(r);
    const auto port = r.string("port");
    if (!port) r.fail_table("key 'port' (an interface of a [[ports]] table) is required");
    sw.static_macs.push_back({mac, port_index(r, "port", *port, sw)});
    r.finish();
  }
}

// [[routes]]: MAC -> one port (`port`) or an ECMP group (`ports`), each an interface of the
// [[ports]]. A MAC has one route and is not also a static MAC (which would win is not obvious).
void read_routes(TableReader& top, const std::string& file, SwitchConfig& sw) {
  int index = 0;
  for (const toml::table* t : tables_of(top, "routes")) {
    TableReader r(*t, file, "[[routes]] #" + std::to_string(++index));
    const model::MacAddress mac = mac_key(r);
    const std::string text = model::format_mac(mac);
    if ((mac >> 40) & 1u) r.fail("mac", "'" + text + "' is a group address; routes are unicast");
    RouteConfig route{mac, {}};
    const auto one = r.string("port");
    const toml::node* many = r.get("ports");
    if (one.has_value() == (many != nullptr)) {
      r.fail_table("give 'port' (one interface) or 'ports' (an ECMP group of interfaces)");
    }
    if (one) route.ports.push_back(port_index(r, "port", *one, sw));
    if (many != nullptr) {
      const toml::array* a = many->as_array();
      if (a == nullptr || a->empty()) r.fail("ports", "must be a non-empty list of interfaces");
      for (const toml::node& e : *a) {
        if (!e.is_string()) r.fail("ports", "must be a list of interface names");
        const uint16_t p = port_index(r, "ports", e.as_string()->get(), sw);
        if (std::find(route.ports.begin(), route.ports.end(), p) != route.ports.end())
          r.fail("ports", "interface '" + sw.ports[p].name + "' is listed twice");
        route.ports.push_back(p);
      }
    }
    for (const RouteConfig& o : sw.routes)
      if (o.mac == route.mac) r.fail("mac", "a second route for " + text);
    for (const StaticMacConfig& m : sw.static_macs)
      if (m.mac == route.mac) r.fail("mac", text + " is a [[static_macs]] entry too");
    sw.routes.push_back(std::move(route));
    r.finish();
  }
}

}  // namespace

SwitchConfig read_switch_config(const toml::table& root, const std::string& file,
                                const DaemonSections* daemon) {
  SwitchConfig sw;
  sw.source = file;
  TableReader top(root, file, "top level");
  auto section = [&](std::string_view key) -> const toml::table* {
    const toml::node* n = top.get(key);
    if (n == nullptr) return nullptr;
    if (!n->is_table()) top.fail(key, "must be a table ([" + std::string(key) + "])");
    return n->as_table();
  };
  // In this order: each section may check itself against the ones before it.
  if (const toml::table* t = section("switch")) read_switch(*t, file, sw, daemon);
  const toml::table* buf = section("buffer");
  if (buf == nullptr) top.fail_table("a [buffer] table with 'size' is required");
  TableReader buffer_reader(*buf, file, "[buffer]");
  read_buffer(buffer_reader, sw);
  if (const toml::table* t = section("policy")) read_policy(*t, file, sw);
  read_classes(top, file, sw);
  if (const toml::table* t = section("classify")) read_classify(*t, file, sw);
  const toml::table* trimming = section("trimming");
  if (trimming != nullptr) read_trimming(*trimming, file, sw);
  read_ports(top, trimming, file, sw);
  read_static_macs(top, file, sw);
  read_routes(top, file, sw);
  // sharebufd's own tables: its reader's, or (no daemon) accepted as tables and not read.
  for (const char* name : kDaemonTables) {
    const toml::table* t = section(name);
    if (t == nullptr) continue;
    if (daemon == nullptr) continue;
    for (const auto& [table, read] : daemon->tables)
      if (table == name) read(*t);
  }
  top.finish();
  return sw;
}

SwitchConfig parse_switch_config(std::string_view text, const std::string& source_name,
                                 std::string* text_out) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(location(source_name, e.source()) + ": " + std::string(e.description()));
  }
  SwitchConfig sw = read_switch_config(root, source_name);
  if (text_out != nullptr) *text_out = std::string(text);
  return sw;
}

std::string read_config_text(const std::string& path) {
  try {
    // A regular file of bounded size (a FIFO passed as --config would block).
    return common::read_regular_file(path, kMaxConfigBytes, "the configuration file");
  } catch (const common::InputError& e) {
    throw ConfigError(e.what());
  }
}

SwitchConfig load_switch_config(const std::string& path) {
  return parse_switch_config(read_config_text(path), path);
}

void validate_switch_config(const SwitchConfig& config) {
  // Everything a switch builds from the configuration except the buffer itself and the
  // ports: the layout, the policy environment and the policy with its parameters (a model file
  // included). The buffer's size was checked against this machine's memory when it was read.
  try {
    const buffer::BufferConfig bc = model::buffer_config(config);
    const buffer::BufferLayout layout(bc.capacity_cells, bc.cell_bytes, bc.ports);
    const policies::PolicyEnv env = model::policy_env(config, layout);
    policies::make_policy(config.policy, config.policy_params, env);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(config.source + ": " + e.what());
  }
}

}  // namespace sharebuf::config

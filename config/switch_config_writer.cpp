#include "config/switch_config_writer.h"

#include <sstream>

#include <toml++/toml.h>

#include "model/frame_parser.h"
#include "model/mac_table.h"
#include "model/trim_params.h"

namespace sharebuf::config {
namespace {

using model::SwitchConfig;

std::string ns(uint64_t v) {
  return std::to_string(v) + "ns";
}

// A JSON value (a policy parameter, a trimming key) as the TOML node the reader reads back.
void put(toml::table& t, const std::string& key, const nlohmann::json& v);

toml::array array_of(const nlohmann::json& v) {
  toml::array a;
  for (const nlohmann::json& e : v) {
    toml::table holder;
    put(holder, "v", e);
    if (toml::node* n = holder.get("v")) a.push_back(std::move(*n));
  }
  return a;
}

void put(toml::table& t, const std::string& key, const nlohmann::json& v) {
  if (v.is_boolean()) {
    t.insert_or_assign(key, v.get<bool>());
  } else if (v.is_number_integer()) {
    t.insert_or_assign(key, v.get<int64_t>());
  } else if (v.is_number()) {
    t.insert_or_assign(key, v.get<double>());
  } else if (v.is_string()) {
    t.insert_or_assign(key, v.get<std::string>());
  } else if (v.is_array()) {
    t.insert_or_assign(key, array_of(v));
  } else if (v.is_object()) {
    toml::table sub;
    for (const auto& [k, e] : v.items())
      put(sub, k, e);
    t.insert_or_assign(key, std::move(sub));
  }
}

std::string prefix_text(uint32_t ip, uint8_t prefix) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." +
         std::to_string((ip >> 8) & 0xff) + "." + std::to_string(ip & 0xff) + "/" +
         std::to_string(prefix);
}

toml::array small_ints(const std::vector<uint8_t>& v) {
  toml::array a;
  for (uint8_t x : v)
    a.push_back(int64_t{x});
  return a;
}

}  // namespace

std::string write_switch_config(const SwitchConfig& c) {
  toml::table root;
  toml::table sw;
  sw.insert("name", c.name);
  sw.insert("mac_ageing", ns(c.mac_ageing_ns));
  sw.insert("mac_table_size", int64_t{c.mac_table_size});
  sw.insert("on_stop", c.drain_on_stop ? "drain" : "drop");
  sw.insert("rx_mode", c.rx_mode == model::RxMode::kPerCpu ? "per-cpu" : "per-port");
  sw.insert("rx_io", c.rx_io == model::RxIo::kAfXdp ? "af_xdp" : "af_packet");
  sw.insert("tx_io", c.tx_io == model::TxIo::kAfXdp ? "af_xdp" : "af_packet");
  sw.insert("af_xdp_umem", c.xdp_shared_umem ? "shared" : "per-socket");
  if (c.rx_threads != 0) sw.insert("rx_threads", int64_t{c.rx_threads});
  sw.insert("poll_mode", model::poll_mode_name(c.poll_mode));
  if (c.poll_mode == model::PollMode::kAdaptive) sw.insert("rx_busy_poll", ns(c.rx_busy_poll_ns));
  sw.insert("rx_park_after", ns(c.rx_park_after_ns));
  sw.insert("realtime_priority", int64_t{c.realtime_priority});
  sw.insert("port_lock_dir", c.port_lock_dir);
  root.insert("switch", std::move(sw));

  toml::table buf;
  buf.insert("size", int64_t{c.buffer.capacity_cells});
  buf.insert("cell_bytes", int64_t{c.buffer.cell_bytes});
  buf.insert("view", std::string(buffer::to_string(c.buffer.view_mode)));
  buf.insert("probe_interval", ns(c.buffer.probe_interval_ns));
  buf.insert("probe_delay", ns(c.buffer.probe_delay_ns));
  buf.insert("probe_path", std::string(buffer::to_string(c.buffer.probe_path)));
  buf.insert("probe_bytes", int64_t{c.buffer.probe_bytes});
  root.insert("buffer", std::move(buf));

  toml::table policy;
  policy.insert("name", c.policy);
  for (const auto& [k, v] : c.policy_params.values.items())
    put(policy, k, v);
  root.insert("policy", std::move(policy));

  toml::array classes;
  // No class: the one the reader makes (every switch has a class).
  const std::vector<model::ClassConfig> listed =
      c.classes.empty() ? std::vector<model::ClassConfig>(1) : c.classes;
  for (const model::ClassConfig& cl : listed) {
    toml::table t;
    t.insert("name", cl.traffic.name);
    t.insert("queue", int64_t{cl.queue});
    if (cl.traffic.alpha) t.insert("alpha", *cl.traffic.alpha);
    t.insert("group", cl.traffic.group == buffer::PriorityGroup::kHigh ? "high" : "low");
    t.insert("role", cl.traffic.role == policies::ProteanRole::kShort  ? "short"
                     : cl.traffic.role == policies::ProteanRole::kLong ? "long"
                                                                       : "incast");
    if (cl.ecn_threshold_cells != 0) t.insert("ecn_threshold", int64_t{cl.ecn_threshold_cells});
    if (!cl.dscp.empty()) t.insert("dscp", small_ints(cl.dscp));
    if (!cl.pcp.empty()) t.insert("pcp", small_ints(cl.pcp));
    t.insert("overflow", std::string(model::to_string(cl.overflow)));
    if (cl.return_threshold_cells != 0)
      t.insert("return_threshold", int64_t{cl.return_threshold_cells});
    classes.push_back(std::move(t));
  }
  root.insert("classes", std::move(classes));

  toml::table classify;
  classify.insert("mode", std::string(model::to_string(c.classify)));
  toml::array rules;
  for (const model::RuleConfig& r : c.rules) {
    toml::table t;
    if (r.proto) t.insert("proto", *r.proto == model::kIpProtoTcp ? "tcp" : "udp");
    if (r.src_ip) t.insert("src", prefix_text(*r.src_ip, r.src_prefix));
    if (r.dst_ip) t.insert("dst", prefix_text(*r.dst_ip, r.dst_prefix));
    if (r.src_port) t.insert("src_port", int64_t{*r.src_port});
    if (r.dst_port) t.insert("dst_port", int64_t{*r.dst_port});
    t.insert("class", c.classes.at(r.class_id).traffic.name);
    rules.push_back(std::move(t));
  }
  if (!rules.empty()) classify.insert("rules", std::move(rules));
  root.insert("classify", std::move(classify));

  toml::table trimming;
  const nlohmann::json trim = model::trim_params_json(c.trim);  // items() must outlive the loop
  for (const auto& [k, v] : trim.items())
    put(trimming, k, v);
  root.insert("trimming", std::move(trimming));

  toml::array ports;
  for (const model::PortConfig& p : c.ports) {
    toml::table t;
    t.insert("interface", p.name);
    if (p.rate_bps != 0) t.insert("rate", static_cast<int64_t>(p.rate_bps));
    t.insert("queues", int64_t{p.num_queues});
    t.insert("scheduler", std::string(model::to_string(p.scheduler)));
    if (!p.weights.empty()) {
      toml::array w;
      for (uint32_t x : p.weights)
        w.push_back(int64_t{x});
      t.insert("weights", std::move(w));
    }
    if (p.default_class < c.classes.size())
      t.insert("default_class", c.classes[p.default_class].traffic.name);
    t.insert("rx_ring_frames", int64_t{p.rx_ring_frames});
    t.insert("tx_batch", int64_t{p.tx_batch});
    t.insert("storm_pps", static_cast<int64_t>(p.storm_pps));
    t.insert("trim_queue", int64_t{p.trim_queue});
    if (p.trim_dscp_toward >= 0) t.insert("trim_dscp_toward", int64_t{p.trim_dscp_toward});
    t.insert("role", p.fabric ? "fabric" : "edge");
    ports.push_back(std::move(t));
  }
  root.insert("ports", std::move(ports));

  toml::array macs;
  for (const model::StaticMacConfig& m : c.static_macs) {
    toml::table t;
    t.insert("mac", model::format_mac(m.mac));
    t.insert("port", c.ports.at(m.port).name);
    macs.push_back(std::move(t));
  }
  if (!macs.empty()) root.insert("static_macs", std::move(macs));

  toml::array routes;
  for (const model::RouteConfig& r : c.routes) {
    toml::table t;
    t.insert("mac", model::format_mac(r.mac));
    toml::array names;
    for (uint16_t p : r.ports)
      names.push_back(c.ports.at(p).name);
    t.insert("ports", std::move(names));
    routes.push_back(std::move(t));
  }
  if (!routes.empty()) root.insert("routes", std::move(routes));

  std::ostringstream out;
  out << root << "\n";
  return out.str();
}

}  // namespace sharebuf::config

#include "mgmt/config_reload.h"

#include <set>
#include <sstream>

#include <spdlog/spdlog.h>
#include <toml++/toml.h>

#include "model/trim_params.h"
#include "policies/registry.h"

namespace sharebuf::mgmt {
namespace {

using nlohmann::json;

std::string value_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// "alpha 1 -> 2, beta 0.5 -> 0.25": the parameters that differ between two parameter objects.
std::string param_changes(const json& before, const json& after) {
  std::string out;
  auto add = [&](const std::string& k, const std::string& a, const std::string& b) {
    out += (out.empty() ? "" : ", ") + k + " " + a + " -> " + b;
  };
  for (const auto& [k, v] : after.items()) {
    if (!before.contains(k)) {
      add(k, "(unset)", value_text(v));
    } else if (before[k] != v) {
      add(k, value_text(before[k]), value_text(v));
    }
  }
  for (const auto& [k, v] : before.items())
    if (!after.contains(k)) add(k, value_text(v), "(unset)");
  return out;
}

std::string rate_name(uint64_t bps) {
  return bps == 0 ? "unshaped" : std::to_string(bps) + " bit/s";
}

void walk(const toml::table& a, const toml::table& b, const std::string& section,
          const std::string& prefix, std::vector<std::string>& out);

std::string node_text(const toml::node& n) {
  std::ostringstream s;
  n.visit([&](const auto& v) { s << v; });
  return s.str();
}

void compare(const toml::node* x, const toml::node* y, const std::string& section,
             const std::string& key, std::vector<std::string>& out) {
  const std::string where = section.empty() ? key : section + " " + key;
  if (x == nullptr || y == nullptr) {
    out.push_back(where);
    return;
  }
  if (x->is_table() && y->is_table()) {
    walk(*x->as_table(), *y->as_table(), section, key + ".", out);
    return;
  }
  if (node_text(*x) != node_text(*y)) out.push_back(where);
}

void walk(const toml::table& a, const toml::table& b, const std::string& section,
          const std::string& prefix, std::vector<std::string>& out) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a)
    keys.insert(std::string(k.str()));
  for (const auto& [k, v] : b)
    keys.insert(std::string(k.str()));
  for (const std::string& k : keys)
    compare(a.get(k), b.get(k), section, prefix + k, out);
}

}  // namespace

std::vector<std::string> toml_differences(std::string_view a, std::string_view b) {
  const toml::table ta = toml::parse(a, std::string_view("a"));
  const toml::table tb = toml::parse(b, std::string_view("b"));
  std::vector<std::string> out;
  std::set<std::string> keys;
  for (const auto& [k, v] : ta)
    keys.insert(std::string(k.str()));
  for (const auto& [k, v] : tb)
    keys.insert(std::string(k.str()));
  for (const std::string& k : keys) {
    const toml::node* x = ta.get(k);
    const toml::node* y = tb.get(k);
    const toml::array* xa = x != nullptr ? x->as_array() : nullptr;
    const toml::array* ya = y != nullptr ? y->as_array() : nullptr;
    if (x != nullptr && y != nullptr && x->is_table() && y->is_table()) {
      walk(*x->as_table(), *y->as_table(), "[" + k + "]", "", out);
    } else if (xa != nullptr && ya != nullptr && xa->is_array_of_tables() &&
               ya->is_array_of_tables()) {
      // [[ports]], [[classes]], ...: entry by entry.
      for (size_t i = 0; i < std::max(xa->size(), ya->size()); ++i) {
        const std::string section = "[[" + k + "]] #" + std::to_string(i + 1);
        if (i >= xa->size() || i >= ya->size()) {
          out.push_back(section);
        } else {
          walk(*xa->get(i)->as_table(), *ya->get(i)->as_table(), section, "", out);
        }
      }
    } else {
      compare(x, y, "", k, out);
    }
  }
  return out;
}

json ReloadReport::to_json() const {
  json j = {{"applied", applied}, {"restart_needed", restart}, {"command_line_kept", kept}};
  if (!error.empty()) j["error"] = error;
  return j;
}

std::string ReloadReport::summary(const std::string& path) const {
  if (!error.empty())
    return "configuration reload refused, the running configuration stays: " + error;
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& e : v)
      s += (s.empty() ? "" : "; ") + e;
    return s;
  };
  std::string s = "configuration reloaded from " + path + ": " +
                  (applied.empty() ? "nothing to change live" : "applied " + list(applied));
  if (!kept.empty()) s += "; kept from the command line: " + list(kept);
  if (!restart.empty()) s += "; NOT applied (they take a restart): " + list(restart);
  return s;
}

ReloadReport reload_config(ControlContext& ctx) {
  if (ctx.config_path.empty())
    return {.error = "the daemon was not started from a configuration file it can read again"};
  try {
    return apply_config(ctx, load_config_file(ctx.config_path, ctx.overrides.sets));
  } catch (const ConfigError& e) {
    return {.error = e.what()};
  }
}

ReloadReport set_config(ControlContext& ctx, const std::vector<std::string>& sets) {
  try {
    DaemonConfig next =
        parse_config(effective_config_toml(ctx), ctx.config.sw.source, sets, "config.set");
    // The command line's own keys are already in the effective configuration.
    return apply_config(ctx, std::move(next), /*all_live=*/true);
  } catch (const ConfigError& e) {
    return {.error = e.what()};
  }
}

ReloadReport apply_config(ControlContext& ctx, DaemonConfig next, bool all_live) {
  ReloadReport r;
  auto keep = [&](const std::optional<std::string>& option, std::string& field,
                  const std::string& key, const char* flag) {
    if (!option) return;
    if (!field.empty() && field != *option)
      r.kept.push_back(std::string(flag) + " " + *option + " over " + key + " '" + field + "'");
    field = *option;
  };
  keep(ctx.overrides.log_level, next.log_level, "[log] level", "--log-level");
  keep(ctx.overrides.stats_file, next.stats_file, "[switch] stats_file", "--stats-file");
  keep(ctx.overrides.socket, next.control_socket, "[control] socket", "--socket");
  for (const std::string& set : ctx.overrides.sets)
    r.kept.push_back("--set " + set);
  try {
    validate_config(next.sw);
    // The parameters the new policy runs with (defaults filled in), to compare with the running
    // ones as policy.get reports them.
    next.sw.policy_params.values =
        policies::make_policy(next.sw.policy, next.sw.policy_params, ctx.sw.policy_env())->params();
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }

  const DaemonConfig& now = ctx.config;
  DaemonConfig target = now;  // what will run: the running configuration with next's live parts
  target.sw.policy = next.sw.policy;
  target.sw.policy_params = next.sw.policy_params;
  target.sw.buffer.view_mode = next.sw.buffer.view_mode;
  target.sw.buffer.probe_interval_ns = next.sw.buffer.probe_interval_ns;
  target.sw.buffer.probe_delay_ns = next.sw.buffer.probe_delay_ns;
  target.log_level = next.log_level;
  target.stats_file = next.stats_file;

  // [trimming]'s live keys that differ, read into the target as trim.set reads them.
  const json trim_before = model::trim_params_json(now.sw.trim);
  const json trim_after = model::trim_params_json(next.sw.trim);
  std::set<std::string, std::less<>> trim_keys;
  policies::Params trim_given;
  for (const policies::ParamSpec& spec : model::kTrimParams) {
    const std::string key(spec.name);
    if (!model::trim_key_live(key)) continue;
    const json a = trim_before.value(key, json());
    const json b = trim_after.value(key, json());
    if (a == b) continue;
    trim_keys.insert(key);
    trim_given.values[key] = b.is_null() ? json(spec.default_value) : b;
  }
  if (!trim_keys.empty()) {
    model::read_trim_params(policies::ParamReader(policies::ParamReader::Subject{"reload"},
                                                  trim_given, model::kTrimParams),
                            target.sw.trim, true);
  }
  // Classes and ports present in both, by name: overflow, return threshold, trim keys, rate.
  std::vector<datapath::TrimUpdate> class_updates, port_updates;
  std::vector<std::pair<std::string, uint64_t>> rates;
  for (model::ClassConfig& c : target.sw.classes) {
    for (const model::ClassConfig& n : next.sw.classes) {
      if (n.traffic.name != c.traffic.name) continue;
      datapath::TrimUpdate u;
      if (n.overflow != c.overflow) u.overflow = n.overflow;
      if (n.return_threshold_cells != c.return_threshold_cells)
        u.return_threshold_cells = n.return_threshold_cells;
      if (!u.overflow && !u.return_threshold_cells) continue;
      u.class_name = c.traffic.name;
      c.overflow = n.overflow;
      c.return_threshold_cells = n.return_threshold_cells;
      class_updates.push_back(u);
    }
  }
  for (model::PortConfig& p : target.sw.ports) {
    for (const model::PortConfig& n : next.sw.ports) {
      if (n.name != p.name) continue;
      if (n.rate_bps != p.rate_bps) {
        rates.emplace_back(p.name, n.rate_bps);
        r.applied.push_back("port " + p.name + " rate " + rate_name(p.rate_bps) + " -> " +
                            rate_name(n.rate_bps));
        p.rate_bps = n.rate_bps;
      }
      datapath::TrimUpdate u;
      if (n.trim_queue != p.trim_queue && n.trim_queue < p.num_queues) u.trim_queue = n.trim_queue;
      if (n.trim_dscp_toward != p.trim_dscp_toward) u.trim_dscp_toward = n.trim_dscp_toward;
      if (!u.trim_queue && !u.trim_dscp_toward) continue;
      u.port = p.name;
      if (u.trim_queue) p.trim_queue = n.trim_queue;
      p.trim_dscp_toward = n.trim_dscp_toward;
      port_updates.push_back(u);
    }
  }
  // Whatever still differs between what will run and what the file says takes a restart.
  try {
    r.restart = toml_differences(effective_config_toml(target, ctx.config_text),
                                 effective_config_toml(next, next.source_text));
  } catch (const toml::parse_error& e) {
    r.error = std::string("cannot compare the configurations: ") + e.what();
    return r;
  }
  if (all_live && !r.restart.empty()) {
    std::string keys;
    for (const std::string& k : r.restart)
      keys += (keys.empty() ? "" : ", ") + k;
    r.error = "these take a restart, nothing was changed: " + keys;
    r.restart.clear();
    return r;
  }

  // Applied in an order where a refusal comes before anything changed: the rates (only refused
  // while tofino-approx meters them), trimming (checked whole), the view, then the policy.
  // A refusal here is rare (the file was validated whole); what was applied before it stays,
  // and the effective configuration says so: the policy and the view as they run.
  auto fail = [&](const std::string& what, const datapath::ControlError& e) {
    r.error = what + ": " + e.message +
              (r.applied.empty() ? ""
                                 : " (applied before it: " + std::to_string(r.applied.size()) +
                                       " change(s), see 'applied')");
    ctx.config = target;
    ctx.config.sw.policy = ctx.sw.policy_name();
    ctx.config.sw.policy_params.values = ctx.sw.policy_params();
    const datapath::ViewSettings v = ctx.sw.view();
    ctx.config.sw.buffer.view_mode = v.mode;
    ctx.config.sw.buffer.probe_interval_ns = v.probe_interval_ns;
    ctx.config.sw.buffer.probe_delay_ns = v.probe_delay_ns;
    return r;
  };
  std::vector<std::string> applied_rates = std::move(r.applied);
  r.applied.clear();
  for (size_t i = 0; i < rates.size(); ++i) {
    if (const auto err = ctx.sw.set_port_rate(rates[i].first, rates[i].second)) {
      for (size_t j = i; j < rates.size(); ++j)  // not applied: as they run
        for (size_t k = 0; k < target.sw.ports.size(); ++k)
          if (target.sw.ports[k].name == rates[j].first)
            target.sw.ports[k].rate_bps = now.sw.ports[k].rate_bps;
      return fail("port " + rates[i].first + " rate", *err);
    }
    r.applied.push_back(applied_rates[i]);
  }
  if (!trim_keys.empty()) {
    if (const auto err = ctx.sw.set_trimming(datapath::trim_update(target.sw.trim, trim_keys)))
      return fail("[trimming]", *err);
    r.applied.push_back("trimming " + param_changes(trim_before, trim_after));
  }
  for (const auto& u : class_updates) {
    if (const auto err = ctx.sw.set_trimming(u)) return fail("class " + *u.class_name, *err);
    r.applied.push_back("class " + *u.class_name + " overflow/return_threshold");
  }
  for (const auto& u : port_updates) {
    if (const auto err = ctx.sw.set_trimming(u)) return fail("port " + *u.port, *err);
    r.applied.push_back("port " + *u.port + " trim_queue/trim_dscp_toward");
  }
  const auto& b = target.sw.buffer;
  const datapath::ViewSettings view = ctx.sw.view();
  if (view.mode != b.view_mode || view.probe_interval_ns != b.probe_interval_ns ||
      view.probe_delay_ns != b.probe_delay_ns) {
    if (const auto err = ctx.sw.set_view(b.view_mode, b.probe_interval_ns, b.probe_delay_ns))
      return fail("the view", *err);
    r.applied.push_back("view " + std::string(buffer::to_string(view.mode)) + " -> " +
                        std::string(buffer::to_string(b.view_mode)) + " (probe_interval " +
                        std::to_string(b.probe_interval_ns) + " ns, probe_delay " +
                        std::to_string(b.probe_delay_ns) + " ns)");
  }
  const std::string running = ctx.sw.policy_name();
  const json running_params = ctx.sw.policy_params();
  if (running != target.sw.policy || running_params != target.sw.policy_params.values ||
      !rates.empty()) {
    if (const auto prev = ctx.sw.install_policy(target.sw.policy, target.sw.policy_params);
        !prev.ok())
      return fail("[policy]", prev.error());
    if (running != target.sw.policy) {
      r.applied.push_back("policy " + running + " -> " + target.sw.policy);
    } else if (running_params != target.sw.policy_params.values) {
      r.applied.push_back("policy " + running + " " +
                          param_changes(running_params, target.sw.policy_params.values));
    } else {
      r.applied.push_back("policy " + running +
                          " rebuilt on the new rates (its state starts again)");
    }
  }
  if (now.log_level != target.log_level) {
    spdlog::set_level(spdlog::level::from_str(target.log_level));
    r.applied.push_back("log level " + now.log_level + " -> " + target.log_level);
  }
  if (now.stats_file != target.stats_file)
    r.applied.push_back("stats file '" + now.stats_file + "' -> '" + target.stats_file + "'");
  ctx.config = std::move(target);
  if (r.restart.empty()) ctx.config_text = next.source_text;
  ctx.on_reload(ctx.config);
  return r;
}

}  // namespace sharebuf::mgmt

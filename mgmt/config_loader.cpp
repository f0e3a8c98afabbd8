#include "mgmt/config_loader.h"

#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <toml++/toml.h>

#include "common/units.h"
#include "config/overrides.h"
#include "config/switch_config_reader.h"
#include "config/toml_reader.h"
#include "mgmt/metrics_server.h"

namespace sharebuf::mgmt {
using common::parse_duration_ns;
using config::TableReader;

namespace {

// [control]: the socket and what its clients may do.
void read_control(const toml::table& t, const std::string& file, DaemonConfig& cfg) {
  TableReader r(t, file, "[control]");
  cfg.control_socket = r.string("socket").value_or("");
  cfg.control_enabled = r.boolean("enabled").value_or(true);
  if (const auto mode = r.string("socket_mode")) {
    char* end = nullptr;
    const unsigned long m = std::strtoul(mode->c_str(), &end, 8);
    if (mode->empty() || *end != '\0' || m > 0777 || (m & 0600) != 0600)
      r.fail("socket_mode",
             "must be an octal mode such as \"0660\" that lets the owner read and write");
    cfg.control.socket_mode = static_cast<uint32_t>(m);
  }
  // Groups are resolved here, so --check-config finds a group the daemon could not use.
  auto group = [&](const char* key, const char* empty_hint) {
    const auto name = r.string(key);
    if (!name) return std::string();
    if (name->empty()) r.fail(key, std::string("must name a group; ") + empty_hint);
    if (!lookup_group(*name))
      r.fail(key, "no group '" + *name + "' on this machine (a name, or a number below 2^32-1)");
    return *name;
  };
  cfg.control.socket_group = group("socket_group", "leave the key out for the daemon's own group");
  cfg.control.admin_group =
      group("admin_group", "leave the key out to let every client run every command");
  cfg.control.max_clients = static_cast<size_t>(r.integer("max_clients", 1, 65536).value_or(1024));
  cfg.control.operator_reserve = std::min<size_t>(8, cfg.control.max_clients / 2);
  if (const auto n = r.integer("operator_reserve", 0, 65535)) {
    if (static_cast<size_t>(*n) >= cfg.control.max_clients)
      r.fail("operator_reserve",
             "must be below max_clients (" + std::to_string(cfg.control.max_clients) + ")");
    cfg.control.operator_reserve = static_cast<size_t>(*n);
  }
  cfg.control.max_clients_per_uid =
      static_cast<size_t>(r.integer("max_clients_per_uid", 1, 65536).value_or(64));
  cfg.control.max_watches_per_uid =
      static_cast<size_t>(r.integer("max_watches_per_uid", 0, 65536).value_or(4));
  if (const auto i = r.with_unit("min_watch_interval", parse_duration_ns)) {
    if (*i < 100'000 || *i > 60'000'000'000ull)
      r.fail("min_watch_interval", "must be from 100us to 60s");
    cfg.control.min_watch_interval_ns = *i;
  }
  cfg.control.cpu_share = r.number("cpu_share", 0.001, 1.0).value_or(0.05);
  if (const auto idle = r.with_unit("idle_timeout", parse_duration_ns)) {
    if (*idle < 1'000'000'000ull || *idle > 7 * 86'400'000'000'000ull)
      r.fail("idle_timeout", "must be from 1s to 7 days (168h)");
    cfg.control.idle_timeout_ns = *idle;
  }
  if (const auto timeout = r.with_unit("request_timeout", parse_duration_ns)) {
    if (*timeout < 100'000'000ull || *timeout > 3'600'000'000'000ull)
      r.fail("request_timeout", "must be from 100ms to 1h");
    cfg.control.request_timeout_ns = *timeout;
  }
  if (const auto dir = r.string("capture_dir")) {
    if (dir->empty() || dir->front() != '/') r.fail("capture_dir", "must be an absolute path");
    cfg.control.capture_dir = *dir;
  }
  if (const auto dir = r.string("model_dir")) {
    if (dir->empty() || dir->front() != '/') r.fail("model_dir", "must be an absolute path");
    cfg.control.model_dir = *dir;
  }
  r.finish();
}

// [metrics]: present means on; the listen address defaults to loopback.
void read_metrics(const toml::table& t, const std::string& file, DaemonConfig& cfg) {
  TableReader r(t, file, "[metrics]");
  cfg.metrics_listen = r.string("listen").value_or(std::string(kDefaultMetricsListen));
  try {
    parse_listen_address(cfg.metrics_listen);
  } catch (const std::invalid_argument& e) {
    r.fail("listen", e.what());
  }
  r.finish();
}

// [log]
void read_log(const toml::table& t, const std::string& file, DaemonConfig& cfg) {
  TableReader r(t, file, "[log]");
  cfg.log_level =
      r.choice("level", "info", {"trace", "debug", "info", "warn", "error", "critical", "off"});
  r.finish();
}

DaemonConfig parse_config_table(const toml::table& root, const std::string& file) {
  DaemonConfig cfg;
  // The switch from config/, sharebufd's own keys here: [switch] stats_file, [control], [log],
  // [metrics].
  config::DaemonSections mine;
  mine.switch_keys = [&cfg](TableReader& r) {
    cfg.stats_file = r.string("stats_file").value_or("");
  };
  mine.tables = {{"control", [&](const toml::table& t) { read_control(t, file, cfg); }},
                 {"log", [&](const toml::table& t) { read_log(t, file, cfg); }},
                 {"metrics", [&](const toml::table& t) { read_metrics(t, file, cfg); }}};
  cfg.sw = config::read_switch_config(root, file, &mine);
  return cfg;
}

}  // namespace

DaemonConfig parse_config(std::string_view text, const std::string& source_name,
                          const std::vector<std::string>& sets, const std::string& origin) {
  if (sets.empty()) return parse_config(text, source_name);
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(config::location(source_name, e.source()) + ": " +
                      std::string(e.description()));
  }
  for (const std::string& s : sets)
    config::apply_override(root, s, origin);
  DaemonConfig cfg = parse_config_table(root, source_name);
  std::ostringstream out;
  out << root << "\n";
  cfg.source_text = out.str();
  return cfg;
}

DaemonConfig load_config_file(const std::string& path, const std::vector<std::string>& sets) {
  return parse_config(config::read_config_text(path), path, sets);
}

DaemonConfig parse_config(std::string_view text, const std::string& source_name) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(config::location(source_name, e.source()) + ": " +
                      std::string(e.description()));
  }
  DaemonConfig cfg = parse_config_table(root, source_name);
  cfg.source_text = std::string(text);
  return cfg;
}

std::optional<uint32_t> lookup_group(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find_first_not_of("0123456789") == std::string::npos) {
    // Any number is a group to the kernel; (gid_t)-1 means "unchanged" to chown, so not that one.
    if (name.size() > 10) return std::nullopt;
    const uint64_t n = std::stoull(name);
    if (n >= 0xffffffffull) return std::nullopt;
    return static_cast<uint32_t>(n);
  }
  if (const struct group* g = getgrnam(name.c_str())) return g->gr_gid;
  return std::nullopt;
}

DaemonConfig load_config_file(const std::string& path) {
  return parse_config(config::read_config_text(path), path);
}

void validate_config(const model::SwitchConfig& config) {
  config::validate_switch_config(config);
}

}  // namespace sharebuf::mgmt

// sharebufd's configuration: the switch (read by config/switch_config_reader.h, as every engine
// reads it) and the daemon's own keys in the same file — [switch] stats_file, [control], [log],
// [metrics].
// Every key is documented in docs/configuration.md; every error names the file, line, column and
// key; unknown keys are errors (a typo must never silently fall back to a default).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config_error.h"
#include "mgmt/client_limits.h"
#include "model/switch_config.h"

namespace sharebuf::mgmt {

using ConfigError = common::ConfigError;

// [control]: who may use the control socket and what it may make the daemon do (README,
// "Security model").
struct ControlConfig {
  uint32_t socket_mode = 0660;
  std::string socket_group;  // group name or number owning the socket; empty: the daemon's group
  size_t max_clients = 1024;
  uint64_t idle_timeout_ns = 300'000'000'000ull;  // a client that sends nothing this long is closed
  // A request line begun this long ago and still incomplete closes its connection: a peer cannot
  // hold the daemon's memory with lines it never finishes.
  uint64_t request_timeout_ns = 10'000'000'000ull;
  std::string capture_dir = "/var/lib/sharebuf/captures";  // captures are written only below it
  std::string model_dir = "/var/lib/sharebuf/models";  // models named in requests: read only below
  // If set, only root, the daemon's user and members of this group (by the peer's primary group)
  // may run commands that change state; other clients are read-only.
  std::string admin_group;
  // What the peers other than operators (root, the daemon's user, admin_group) may take, so that
  // none of them can lock the operator out or take the forwarding threads' CPU (docs/security.md).
  size_t operator_reserve = 8;  // connections only operators may use (< max_clients)
  size_t max_clients_per_uid = 64;
  size_t max_watches_per_uid = 4;
  uint64_t min_watch_interval_ns = 10'000'000;  // their watches sample at most this often
  double cpu_share = 0.05;  // of one core, for their requests and watch samples together

  ClientLimits limits() const {
    return {max_clients, operator_reserve, max_clients_per_uid, max_watches_per_uid};
  }
};

// A group named by [control] socket_group / admin_group: a number (any gid), or a name this
// machine knows. nullopt if it is neither.
std::optional<uint32_t> lookup_group(const std::string& name);

// [metrics] listen when the table is there without it: loopback only, so that nothing beyond this
// machine reads the switch unless the operator says so.
inline constexpr std::string_view kDefaultMetricsListen = "127.0.0.1:9464";

struct DaemonConfig {
  model::SwitchConfig sw;
  std::string log_level = "info";
  std::string stats_file;       // written on exit (and on SIGUSR1) if set
  std::string control_socket;   // [control] socket; empty = /run/sharebuf/<name>.sock
  bool control_enabled = true;  // [control] enabled
  ControlConfig control;        // the rest of [control]
  std::string metrics_listen;   // [metrics] listen (mgmt/metrics_server.h); empty: no [metrics]
  std::string source_text;      // the TOML text it was parsed from
};

// Throws ConfigError.
DaemonConfig load_config_file(const std::string& path);
DaemonConfig parse_config(std::string_view text, const std::string& source_name);
// The same with `section.key=value` overrides over the file (sharebufd --set, config.set:
// config/overrides.h), applied in order; source_text is then the overridden TOML.
DaemonConfig load_config_file(const std::string& path, const std::vector<std::string>& sets);
DaemonConfig parse_config(std::string_view text, const std::string& source_name,
                          const std::vector<std::string>& sets,
                          const std::string& origin = "--set");

// config::validate_switch_config: what --check-config does. Throws ConfigError.
void validate_config(const model::SwitchConfig& config);

}  // namespace sharebuf::mgmt

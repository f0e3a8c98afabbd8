// The switch's configuration from TOML: every table that describes the switch — [switch],
// [buffer], [policy], [[classes]], [classify], [trimming], [[ports]], [[static_macs]], [[routes]] —
// read strictly into a model::SwitchConfig, every error naming file, line, column and key (e.g.
// `sw.toml:12:9: [[ports]] #2 key 'rate': '100 Mbitz': unknown rate unit (...)`); an unknown key
// is an error, never a silent default. The live switch, the replay, ns-3 and the P4 table
// generator all read a switch through here; none of them needs the daemon (mgmt/) for it.
//
// sharebufd's own parts of the same file — [switch] stats_file, [control], [log], [metrics] —
// belong to the daemon: it passes DaemonSections to read them (mgmt/config_loader.h). Without
// DaemonSections they are accepted (a daemon's file may be replayed or simulated as it is) and not
// read.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "common/config_error.h"
#include "config/toml_reader.h"
#include "model/switch_config.h"

namespace sharebuf::config {

// The largest configuration file read (a regular file only).
inline constexpr size_t kMaxConfigBytes = 4 << 20;

// The top-level tables that are sharebufd's, not the switch's.
inline constexpr const char* kDaemonTables[] = {"control", "log", "metrics"};

struct DaemonSections {
  // Reads [switch]'s daemon keys from its reader (what it leaves unread is an error).
  std::function<void(TableReader&)> switch_keys;
  // Reads one of kDaemonTables.
  std::vector<std::pair<std::string, std::function<void(const toml::table&)>>> tables;
};

// Throws ConfigError.
model::SwitchConfig read_switch_config(const toml::table& root, const std::string& file,
                                       const DaemonSections* daemon = nullptr);
// From TOML text (`source_name` names it in errors); the text is copied to *text_out if given.
model::SwitchConfig parse_switch_config(std::string_view text, const std::string& source_name,
                                        std::string* text_out = nullptr);
// The file's text: a regular file of at most kMaxConfigBytes (a FIFO would block).
std::string read_config_text(const std::string& path);
model::SwitchConfig load_switch_config(const std::string& path);

// Builds what a switch builds from the configuration — the layout, the policy environment and the
// policy with its parameters — without allocating the buffer or opening any port (what
// sharebufd --check-config does). Throws ConfigError.
void validate_switch_config(const model::SwitchConfig& config);

}  // namespace sharebuf::config

// Reloading the configuration of a running daemon (SIGHUP, the config.reload command): the file
// is read and validated whole first, and a file that does not load changes nothing (the reason is
// reported, the running configuration stays). A file that loads is compared with what runs:
//   - applied live: [policy] (name and parameters), the view ([buffer] view, probe_interval,
//     probe_delay), [trimming]'s live keys with each class's overflow and each port's trim keys
//     (as trim.set), each port's rate (the shaper and departure clock at the port's next burst;
//     the policy is rebuilt on the new rates), [log] level and [switch] stats_file;
//   - everything else (ports, queues, classes, the buffer's size, [control], ...) takes a restart:
//     each such key that differs is named in the report, and keeps its running value — the
//     effective configuration (`config`) says what runs, never what the file asks for;
//   - what sharebufd's command line set (--log-level, --stats-file, --socket) stays over the file,
//     and the report says so.
// Runs on the control thread (ControlContext's owner).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mgmt/control_commands.h"

namespace sharebuf::mgmt {

struct ReloadReport {
  std::string error;                 // non-empty: nothing was changed
  std::vector<std::string> applied;  // what changed live, one line each
  std::vector<std::string> restart;  // keys that differ and take a restart
  std::vector<std::string> kept;     // command-line options kept over the file
  nlohmann::json to_json() const;
  // One log line: "configuration reloaded from F: ...".
  std::string summary(const std::string& path) const;
};

// Reads ctx.config_path again (with the command line's --set over it) and applies what can be
// applied live (see above).
ReloadReport reload_config(ControlContext& ctx);
// The same with a configuration already read (and validated by the caller or not: it is here).
// `all_live`: refuse, changing nothing, when a key that takes a restart differs (config.set).
ReloadReport apply_config(ControlContext& ctx, DaemonConfig next, bool all_live = false);
// `section.key=value` overrides over the running configuration, applied live as a reload
// applies a file (config.set, sharebufctl set); a key that takes a restart is refused.
ReloadReport set_config(ControlContext& ctx, const std::vector<std::string>& sets);

// The keys whose values differ between two TOML documents, as "[section] key",
// "[[ports]] #2 key" or "[section] table.key"; empty if they state the same.
std::vector<std::string> toml_differences(std::string_view a, std::string_view b);

}  // namespace sharebuf::mgmt

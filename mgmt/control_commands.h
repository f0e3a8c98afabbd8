// The control protocol's commands: newline-delimited JSON, one request -> one reply.
//   request  {"cmd": "policy.set", "args": {...}, "id": <anything, echoed>}
//   reply    {"ok": true, "result": ...}   or
//            {"ok": false, "error": "what was wrong", "code": "bad_request" | "invalid_argument" |
//             "conflict" | "not_found" | "io_error" | "forbidden" | "internal"}
// Every command is one row of a table (name, usage, help, handler); `list-commands` prints it.
// `watch` is a stream and is served by ControlServer; its row validates the arguments.
//
// Handlers run on the control thread only and reach the datapath only through
// datapath::SwitchControl (its threading contract: nothing blocks on a worker).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/version.h"
#include "datapath/clocks.h"
#include "datapath/switch_control.h"
#include "mgmt/config_loader.h"

namespace sharebuf::mgmt {

inline constexpr std::string_view kVersion = common::kVersion;
inline constexpr size_t kMaxRequestBytes = 1 << 20;
inline constexpr uint64_t kMinWatchIntervalUs = 100;

// A request that failed: the reply carries the message and a code, "bad_request" for what the
// client got wrong in the request itself (unknown command, bad argument), or the datapath's
// ControlError code.
class RequestError : public std::runtime_error {
 public:
  explicit RequestError(const std::string& message, std::string code = "bad_request")
      : std::runtime_error(message), code_(std::move(code)) {}
  explicit RequestError(const datapath::ControlError& e)
      : RequestError(e.message, std::string(datapath::to_string(e.code))) {}
  const std::string& code() const noexcept { return code_; }

 private:
  std::string code_;
};

// What sharebufd's command line set over the configuration file; a reload keeps it (and says so).
struct CommandLineOverrides {
  std::optional<std::string> log_level;   // --log-level
  std::optional<std::string> stats_file;  // --stats-file
  std::optional<std::string> socket;      // --socket
  std::vector<std::string> sets;          // --set section.key=value, over the file in order
};

struct ControlContext {
  ControlContext(datapath::SwitchControl& s, DaemonConfig cfg, std::string text)
      : sw(s), config(std::move(cfg)), config_text(std::move(text)) {}
  datapath::SwitchControl& sw;
  DaemonConfig config;      // the effective configuration: policy.set and view.set update it
  std::string config_text;  // the TOML it was loaded from
  // The file a reload reads (SIGHUP, config.reload); empty: the daemon has none to read again.
  std::string config_path;
  CommandLineOverrides overrides;
  // After a reload changed the configuration (on the control thread): e.g. the stats file's path
  // for the daemon's main thread.
  std::function<void(const DaemonConfig&)> on_reload = [](const DaemonConfig&) {};
  std::function<void()> shutdown = [] {};
  // Log lines the daemon could not write (a dead or full stderr: mgmt/stderr_sink.h); `status`.
  std::function<uint64_t()> log_lines_lost = [] { return uint64_t{0}; };
  uint64_t started_ns = datapath::monotonic_ns();
  nlohmann::json baseline;  // counters at the last counters.reset (null: never reset)
  uint64_t reset_ns = 0;
};

struct Command {
  std::string_view name;
  std::string_view usage;  // the args object, e.g. {"name": string, "params": object}
  std::string_view help;
  std::function<nlohmann::json(ControlContext&, const nlohmann::json& args)> handler;
  // Changes the switch (policy, view, counters, captures, shutdown): with [control] admin_group
  // set, only admin clients may run it.
  bool admin = false;
};

// Who sent a request (the socket's peer credentials) and whether it may change the switch.
struct Peer {
  uint32_t uid = 0;
  uint32_t gid = 0;
  int32_t pid = 0;
  bool admin = true;
};

std::span<const Command> control_commands();

struct ParsedRequest {
  std::string cmd;
  nlohmann::json args = nlohmann::json::object();
  nlohmann::json id;  // null if absent
};
// Throws RequestError for malformed JSON, a missing or non-string "cmd", non-object "args".
ParsedRequest parse_request(std::string_view line);

// Runs one request line for `peer` and returns the reply (never throws).
nlohmann::json handle_request(ControlContext& ctx, std::string_view line, const Peer& peer = {});
nlohmann::json error_reply(std::string_view message, const nlohmann::json& id = nullptr,
                           std::string_view code = "bad_request");

// The watch interval from a request's args (interval_us >= 100); throws RequestError.
uint64_t watch_interval_ns(const nlohmann::json& args);

// Counters as SwitchControl::stats() reports them, minus ctx.baseline (since counters.reset).
nlohmann::json stats_since_reset(const ControlContext& ctx);
// Whether a number stats() reports under `key` (per port, queue or tofino_approx) is a counter,
// which counts from counters.reset; the others are gauges, reported as they are.
bool is_counter(std::string_view key);
// The effective configuration as TOML that load_config_file accepts: `text` (the file it was read
// from) with what was set over it — the command line's options, what changed live (policy, view,
// trimming, port rates) — written in.
std::string effective_config_toml(const ControlContext& ctx);
std::string effective_config_toml(const DaemonConfig& cfg, std::string_view text);

}  // namespace sharebuf::mgmt

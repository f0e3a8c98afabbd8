// The control protocol's commands: newline-delimited JSON, one request -> one reply.
//   request  {"cmd": "policy.set", "args": {...}, "id": <anything, echoed>}
//   reply    {"ok": true, "result": ...}   or   {"ok": false, "error": "what was wrong"}
// Every command is one row of a table (name, usage, help, handler); `list-commands` prints it.
// `watch` is a stream and is served by ControlServer; its row validates the arguments.
//
// Handlers run on the control thread only. They never block on the datapath: they read atomics
// and publish new state (a policy, a view mode) with atomic stores.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "datapath/switch_core.h"
#include "mgmt/config_loader.h"

namespace sharebuf::mgmt {

inline constexpr std::string_view kVersion = "0.1.0";
inline constexpr size_t kMaxRequestBytes = 1 << 20;
inline constexpr uint64_t kMinWatchIntervalUs = 100;

// A request the client got wrong (unknown command, bad argument): the reply says why.
class RequestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ControlContext {
  ControlContext(datapath::SwitchCore& c, DaemonConfig cfg, std::string text)
      : core(c), config(std::move(cfg)), config_text(std::move(text)) {}
  datapath::SwitchCore& core;
  DaemonConfig config;      // the effective configuration: policy.set and view.set update it
  std::string config_text;  // the TOML it was loaded from
  std::function<void()> shutdown = [] {};
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
nlohmann::json error_reply(std::string_view message, const nlohmann::json& id = nullptr);

// One watch sample: time, totals, per-queue occupancy, threshold and drops.
nlohmann::json watch_sample(const datapath::SwitchCore& core);
// The watch interval from a request's args (interval_us >= 100); throws RequestError.
uint64_t watch_interval_ns(const nlohmann::json& args);

// Counters as switch_stats_json reports them, minus ctx.baseline (since counters.reset).
nlohmann::json stats_since_reset(const ControlContext& ctx);
// The effective configuration as TOML that load_config_file accepts.
std::string effective_config_toml(const ControlContext& ctx);

}  // namespace sharebuf::mgmt

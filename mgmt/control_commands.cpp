#include "mgmt/control_commands.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <span>
#include <sstream>

#include <spdlog/spdlog.h>
#include <toml++/toml.h>

#include "buffer/drop_reason.h"
#include "common/bounded_input.h"
#include "common/units.h"
#include "mgmt/config_reload.h"
#include "model/trim_params.h"
#include "model/view_params.h"
#include "policies/registry.h"

namespace sharebuf::mgmt {
namespace {

using nlohmann::json;

// Monotonic counters of SwitchControl::stats(); everything else (occupancy, thresholds, peaks,
// delays, configuration) is a gauge and is reported as is after counters.reset.
constexpr std::array kCounterKeys = {
    // per queue
    "received", "admitted", "admitted_cells", "transmitted", "transmitted_bytes", "ecn_marked",
    "trimmed", "trimmed_sent", "trimmed_dropped", "header_reserve", "bounced", "deflected",
    "trimmed_newest", "pool_full_stalled",
    // per port
    "rx_frames", "rx_bytes", "tx_frames", "tx_bytes", "tx_errors", "ring_drops", "socket_frames",
    "interface_rx_frames", "before_socket", "rx_out_of_order", "truncated", "filtered", "flooded",
    "oversize", "storm_dropped", "checksum_completed", "malformed_total", "shaper_catchup_bytes",
    "probe_charged_bytes", "rx_kept_in_chunk", "tx_from_chunk",
    // per port, tofino_approx ("deflected" above)
    "ingress_trimmed", "deflect_dropped", "notifications", "to_pessimistic", "to_half",
    "to_optimistic"};

void subtract(json& cur, const json& base) {
  if (cur.is_array() && base.is_array()) {
    for (size_t i = 0; i < cur.size() && i < base.size(); ++i)
      subtract(cur[i], base[i]);
    return;
  }
  if (!cur.is_object() || !base.is_object()) return;
  for (auto& [key, value] : cur.items()) {
    if (!base.contains(key)) continue;
    const json& b = base[key];
    if (is_counter(key) && value.is_number_unsigned() && b.is_number_unsigned()) {
      value = value.get<uint64_t>() - std::min(value.get<uint64_t>(), b.get<uint64_t>());
    } else if ((key == "dropped" || key == "malformed") && value.is_object()) {
      for (auto& [k, v] : value.items()) {
        if (b.contains(k) && v.is_number_unsigned())
          v = v.get<uint64_t>() - std::min(v.get<uint64_t>(), b[k].get<uint64_t>());
      }
    } else if (key == "ports" || key == "queues" || key == "tofino_approx") {
      subtract(value, b);
    }
  }
  // A queue's frames queued at the reset were admitted before it: the identity since the reset
  // is admitted = transmitted + pushed_out + reclaimed + queued - queued_at_reset.
  if (cur.contains("queued") && base.contains("queued")) cur["queued_at_reset"] = base["queued"];
}

std::string arg_string(const json& args, const char* key, bool required) {
  if (!args.contains(key)) {
    if (required) throw RequestError(std::string("missing argument '") + key + "'");
    return {};
  }
  if (!args[key].is_string())
    throw RequestError(std::string("argument '") + key + "' must be a string");
  return args[key].get<std::string>();
}

void only_keys(const json& args, std::initializer_list<std::string_view> keys) {
  for (const auto& [k, v] : args.items()) {
    bool ok = false;
    for (std::string_view allowed : keys)
      ok = ok || allowed == k;
    if (!ok) {
      std::string list;
      for (std::string_view allowed : keys)
        list += (list.empty() ? "" : ", ") + std::string(allowed);
      throw RequestError("unknown argument '" + k + "'" +
                         (list.empty() ? " (this command takes none)" : " (known: " + list + ")"));
    }
  }
}

// The view as policy.get, status and view.set report it.
json view_json(const datapath::SwitchControl& sw) {
  const datapath::ViewSettings v = sw.view();
  return {{"mode", buffer::to_string(v.mode)},
          {"probe_interval_ns", v.probe_interval_ns},
          {"probe_delay_ns", v.probe_delay_ns}};
}

json status(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  ctx.sw.reclaim();
  json out = ctx.sw.status();
  const json view = view_json(ctx.sw);
  out["name"] = ctx.sw.config().name;
  out["version"] = kVersion;
  out["pid"] = static_cast<int64_t>(getpid());
  out["uptime_s"] = static_cast<double>(datapath::monotonic_ns() - ctx.started_ns) * 1e-9;
  out["policy"] = ctx.sw.policy_name();
  out["view"] = view["mode"];
  out["probe_interval_ns"] = view["probe_interval_ns"];
  out["probe_delay_ns"] = view["probe_delay_ns"];
  out["log_lines_lost"] = ctx.log_lines_lost();
  return out;
}

json ports(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  json stats = stats_since_reset(ctx);
  for (auto& p : stats["ports"]) {
    p.erase("queues");
    p.erase("latency");
  }
  return stats["ports"];
}

// Where frames' time goes, per port and hop (datapath/hop_latency.h), since counters.reset.
json latency(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  const json stats = ctx.sw.stats();
  json out = json::array();
  for (const auto& p : stats["ports"])
    out.push_back({{"port", p["port"]}, {"interface", p["interface"]}, {"hops", p["latency"]}});
  return out;
}

json queues(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  json stats = stats_since_reset(ctx);
  json out = json::array();
  for (auto& p : stats["ports"]) {
    for (auto& q : p["queues"]) {
      q["port"] = p["port"];
      q["interface"] = p["interface"];
      out.push_back(std::move(q));
    }
  }
  return out;
}

json config(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  return {{"toml", effective_config_toml(ctx)}, {"source", ctx.config.sw.source}};
}

json policy_get(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  json d = ctx.sw.policy_describe();
  d["view"] = view_json(ctx.sw);
  return d;
}

// `name` resolved below `dir` (a relative name is taken from there). The directory that will
// hold the file, with every symbolic link resolved, must be `dir` or below it: a client may
// make the daemon (root) write captures and read models only where the operator said
// ([control] `key`). `create`: make the directories (captures).
std::string confined_path(const std::string& dir, const std::string& name, const char* key,
                          const char* what, bool create) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (create) fs::create_directories(dir, ec);
  const fs::path root = fs::weakly_canonical(dir, ec);
  if (ec || !fs::is_directory(root, ec))
    throw RequestError("the " + std::string(what) + " directory " + dir + " ([control] " + key +
                       ") cannot be used");
  const fs::path wanted = fs::path(name).is_absolute() ? fs::path(name) : root / name;
  const fs::path file = wanted.filename();
  if (file.empty() || file == "." || file == "..")
    throw RequestError("'" + name + "' does not name a file");
  // A file that is read is resolved whole, so a symbolic link in the directory cannot lead out
  // of it; one that is written is opened with O_NOFOLLOW instead (FrameCapture).
  const fs::path parent = create ? fs::weakly_canonical(wanted.parent_path(), ec)
                                 : fs::weakly_canonical(wanted, ec).parent_path();
  const std::string p = parent.string();
  const std::string r = root.string();
  if (ec ||
      !(p == r || (p.size() > r.size() && p.compare(0, r.size(), r) == 0 && p[r.size()] == '/'))) {
    throw RequestError(std::string(what) + "s are " + (create ? "written" : "read") +
                       " only below " + r + " ([control] " + key + "); " + name + " is not");
  }
  if (!create) return fs::weakly_canonical(wanted, ec).string();
  // At most one directory below the capture directory is made, so a request cannot build a tree.
  if (p != r && p.find('/', r.size() + 1) != std::string::npos) {
    throw RequestError(std::string(what) + "s are written in " + r +
                       " or one directory below it ([control] " + key + "); " + name +
                       " is deeper");
  }
  fs::create_directory(parent, ec);
  return (parent / file).string();
}

json policy_set(ControlContext& ctx, const json& args) {
  only_keys(args, {"name", "params"});
  std::string name = arg_string(args, "name", false);
  if (name.empty()) name = ctx.sw.policy_name();
  policies::Params params;
  if (args.contains("params")) {
    if (!args["params"].is_object()) throw RequestError("argument 'params' must be an object");
    params.values = args["params"];
  }
  // A model named in a request is read as root: only from the operator's model directory.
  if (params.values.contains("model") && params.values["model"].is_string()) {
    params.values["model"] =
        confined_path(ctx.config.control.model_dir, params.values["model"].get<std::string>(),
                      "model_dir", "model", false);
  }
  // A patch, as trim.set: the keys given change, the others keep the values they have — the
  // running policy's when it is the one named, a policy's defaults otherwise.
  if (name == ctx.sw.policy_name() && params.values.is_object()) {
    json merged = ctx.sw.policy_params();
    for (const auto& [k, v] : params.values.items())
      merged[k] = v;
    params.values = std::move(merged);
  }
  const auto previous = ctx.sw.install_policy(name, params);
  if (!previous.ok()) throw RequestError(previous.error());
  ctx.config.sw.policy = name;
  ctx.config.sw.policy_params.values = ctx.sw.policy_params();
  return {{"previous", previous.value()}, {"policy", name}, {"params", ctx.sw.policy_params()}};
}

json policy_list(ControlContext&, const json& args) {
  only_keys(args, {});
  json out = json::array();
  for (const policies::PolicyInfo& p : policies::builtin_policies()) {
    json params = json::array();
    for (const policies::ParamSpec& s : p.params) {
      params.push_back({{"name", s.name},
                        {"type", policies::to_string(s.type)},
                        {"default", s.default_value},
                        {"range", policies::range_text(s)},
                        {"help", s.help}});
    }
    out.push_back({{"name", p.name}, {"summary", p.summary}, {"params", params}});
  }
  return out;
}

// A view key's duration given in microseconds (view.set's `probe_interval_us`), in ns, within the
// range model/view_params.h declares for `name`; throws RequestError.
uint64_t arg_view_us(const json& args, const char* key, std::string_view name) {
  const json& v = args[key];
  const auto error = [&] {
    return RequestError(std::string("argument '") + key + "' must be a number of microseconds, " +
                        policies::range_text(model::view_spec(name)));
  };
  if (!v.is_number() || v.get<double>() < 0) throw error();
  const auto ns = static_cast<uint64_t>(std::llround(v.get<double>() * 1000));
  if (model::view_duration_error(name, ns)) throw error();
  return ns;
}

json view_set(ControlContext& ctx, const json& args) {
  only_keys(args, {"mode", "probe_interval_us", "probe_delay_us"});
  const std::string mode = arg_string(args, "mode", false);
  if (!mode.empty() && !model::view_mode(mode))
    throw RequestError("argument 'mode' must be one of " +
                       policies::range_text(model::view_spec("view")) + ", got \"" + mode + "\"");
  std::optional<uint64_t> interval;
  std::optional<uint64_t> delay;
  if (args.contains("probe_interval_us"))
    interval = arg_view_us(args, "probe_interval_us", "probe_interval");
  if (args.contains("probe_delay_us")) delay = arg_view_us(args, "probe_delay_us", "probe_delay");
  std::optional<buffer::ViewMode> m;
  if (!mode.empty()) m = *model::view_mode(mode);
  if (const auto err = ctx.sw.set_view(m, interval, delay)) throw RequestError(*err);
  const datapath::ViewSettings now = ctx.sw.view();
  ctx.config.sw.buffer.probe_interval_ns = now.probe_interval_ns;
  ctx.config.sw.buffer.probe_delay_ns = now.probe_delay_ns;
  ctx.config.sw.buffer.view_mode = now.mode;
  json out = view_json(ctx.sw);
  out["view"] = out["mode"];  // the name this reply has always used
  return out;
}

// trim.set: [trimming]'s live keys, and a class's or a port's trimming keys, read through their
// declarations (model/trim_params.h) as the configuration file is. It patches: the keys given
// change, the others keep their values.
json trim_set(ControlContext& ctx, const json& args) {
  using model::kTrimClassParams;
  using model::kTrimParams;
  using model::kTrimPortParams;
  const policies::ParamReader::Subject subject{"trim.set"};
  auto declared = [](std::span<const policies::ParamSpec> table, std::string_view key) {
    return std::any_of(table.begin(), table.end(), [&](const auto& s) { return s.name == key; });
  };
  policies::Params top, per_class, per_port;
  std::set<std::string, std::less<>> top_keys;
  for (const auto& [key, value] : args.items()) {
    if (key == "class" || key == "port") continue;
    if (declared(kTrimClassParams, key)) {
      per_class.values[key] = value;
    } else if (declared(kTrimPortParams, key)) {
      per_port.values[key] = value;
    } else if (declared(kTrimParams, key) && !model::trim_key_live(key)) {
      throw RequestError("argument '" + key + "' is set at start only ([trimming] in the file)");
    } else {
      top.values[key] = value;  // unknown keys: the reader names the known ones
      top_keys.insert(key);
    }
  }
  // A class's return threshold may be a size, as in the file: cells from here on.
  if (per_class.values.contains("return_threshold") &&
      per_class.values["return_threshold"].is_string()) {
    try {
      per_class.values["return_threshold"] = common::parse_size_cells(
          per_class.values["return_threshold"].get<std::string>(), ctx.config.sw.buffer.cell_bytes);
    } catch (const std::invalid_argument& e) {
      throw RequestError(std::string("argument 'return_threshold': ") + e.what());
    }
  }
  model::TrimConfig trim = ctx.config.sw.trim;
  datapath::TrimUpdate u;
  try {
    const policies::ParamReader r(subject, top, kTrimParams);
    model::read_trim_params(r, trim, true);
    u = datapath::trim_update(trim, top_keys);
    const policies::ParamReader rc(subject, per_class, kTrimClassParams);
    if (rc.has("overflow")) u.overflow = model::overflow_action(rc.choice("overflow"));
    if (rc.has("return_threshold"))
      u.return_threshold_cells = static_cast<uint32_t>(rc.integer("return_threshold"));
    const policies::ParamReader rp(subject, per_port, kTrimPortParams);
    if (rp.has("trim_queue")) u.trim_queue = static_cast<uint32_t>(rp.integer("trim_queue"));
    if (rp.has("trim_dscp_toward"))
      u.trim_dscp_toward = static_cast<int>(rp.signed_integer("trim_dscp_toward"));
  } catch (const policies::ConfigError& e) {
    throw RequestError(e.what(), "invalid_argument");
  }
  if (args.contains("class")) u.class_name = arg_string(args, "class", true);
  if (args.contains("port")) u.port = arg_string(args, "port", true);
  if (const auto err = ctx.sw.set_trimming(u)) throw RequestError(*err);
  // The effective configuration follows (config, and what a restart would load).
  model::SwitchConfig& sw = ctx.config.sw;
  sw.trim = trim;
  for (auto& c : sw.classes) {
    if (u.class_name && c.traffic.name == *u.class_name) {
      if (u.overflow) c.overflow = *u.overflow;
      if (u.return_threshold_cells) c.return_threshold_cells = *u.return_threshold_cells;
    }
  }
  for (auto& p : sw.ports) {
    if (u.port && p.name == *u.port) {
      if (u.trim_queue) p.trim_queue = *u.trim_queue;
      if (u.trim_dscp_toward) p.trim_dscp_toward = *u.trim_dscp_toward;
    }
  }
  return ctx.sw.trimming();
}

json trim_get(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  return ctx.sw.trimming();
}

json counters_reset(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  ctx.baseline = ctx.sw.stats();
  ctx.reset_ns = datapath::monotonic_ns();
  ctx.sw.reset_peaks();
  return {{"reset", true}};
}

json watch(ControlContext&, const json& args) {
  watch_interval_ns(args);
  throw RequestError("watch streams samples; ControlServer serves it");
}

// Where a capture named `name` may be written: below the capture directory ([control]
// capture_dir), as a relative name or an absolute path whose directory resolves inside it.
json capture_start(ControlContext& ctx, const json& args) {
  only_keys(args, {"path", "mode", "max_bytes", "per_port", "overwrite", "stamps"});
  if (const auto running = ctx.sw.capture_path())
    throw RequestError("a capture is running (" + *running + "); capture.stop first", "conflict");
  const std::string requested = arg_string(args, "path", true);
  bool overwrite = false;
  if (args.contains("overwrite")) {
    if (!args["overwrite"].is_boolean())
      throw RequestError("argument 'overwrite' must be true or false");
    overwrite = args["overwrite"].get<bool>();
  }
  const std::string mode = arg_string(args, "mode", false);
  if (!mode.empty() && mode != "drops" && mode != "all")
    throw RequestError("argument 'mode' must be \"drops\" or \"all\", got \"" + mode + "\"");
  const std::string stamps = arg_string(args, "stamps", false);
  if (!stamps.empty() && stamps != "admission" && stamps != "ring")
    throw RequestError("argument 'stamps' must be \"admission\" or \"ring\", got \"" + stamps +
                       "\"");
  if (stamps == "ring" && mode != "all")
    throw RequestError("argument 'stamps' = \"ring\" needs mode \"all\"");
  const std::string path =
      confined_path(ctx.config.control.capture_dir, requested, "capture_dir", "capture", true);
  uint64_t max_bytes = 100'000'000;
  if (args.contains("max_bytes")) {
    if (!args["max_bytes"].is_number_unsigned() || args["max_bytes"].get<uint64_t>() < 1024)
      throw RequestError("argument 'max_bytes' must be an integer >= 1024");
    max_bytes = args["max_bytes"].get<uint64_t>();
  }
  // The limit is what the capture may write: no more than the file system has free.
  if (struct statvfs fsinfo{};
      statvfs(std::filesystem::path(path).parent_path().c_str(), &fsinfo) == 0) {
    const uint64_t free_bytes = uint64_t{fsinfo.f_bavail} * fsinfo.f_frsize;
    if (max_bytes > free_bytes) {
      throw RequestError("argument 'max_bytes' (" + std::to_string(max_bytes) +
                         ") is more than the " + std::to_string(free_bytes) + " bytes free below " +
                         ctx.config.control.capture_dir);
    }
  }
  std::vector<std::string> port_names;
  if (args.contains("per_port")) {
    if (!args["per_port"].is_boolean())
      throw RequestError("argument 'per_port' must be true or false");
    if (args["per_port"].get<bool>()) {
      for (const auto& p : ctx.sw.config().ports)
        port_names.push_back(p.name);
    }
  }
  std::unique_ptr<datapath::FrameCapture> cap;
  try {
    cap = std::make_unique<datapath::FrameCapture>(
        path,
        mode == "all" ? datapath::FrameCapture::Mode::kAll : datapath::FrameCapture::Mode::kDrops,
        max_bytes, port_names, overwrite);
  } catch (const std::exception& e) {
    throw RequestError(e.what(), "io_error");
  }
  cap->set_ring_stamps(stamps == "ring");
  json status = cap->status();
  if (const auto err = ctx.sw.start_capture(std::move(cap))) throw RequestError(*err);
  return status;
}

json capture_stop(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  auto stopped = ctx.sw.stop_capture();
  if (!stopped.ok()) throw RequestError(stopped.error());
  return stopped.value();
}

json config_reload(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  const ReloadReport r = reload_config(ctx);
  if (!r.error.empty()) {
    spdlog::error("{}", r.summary(ctx.config_path));
    throw RequestError(r.error, "invalid_argument");
  }
  (r.restart.empty() ? spdlog::info("{}", r.summary(ctx.config_path))
                     : spdlog::warn("{}", r.summary(ctx.config_path)));
  return r.to_json();
}

json config_set(ControlContext& ctx, const json& args) {
  only_keys(args, {"set"});
  std::vector<std::string> sets;
  if (!args.contains("set") || !args["set"].is_array() || args["set"].empty())
    throw RequestError("argument 'set' must be a list of \"section.key=value\" strings");
  for (const json& v : args["set"]) {
    if (!v.is_string()) throw RequestError("argument 'set': every entry must be a string");
    sets.push_back(v.get<std::string>());
  }
  const ReloadReport r = set_config(ctx, sets);
  if (!r.error.empty()) throw RequestError(r.error, "invalid_argument");
  spdlog::info("config.set {}: applied {}", json(sets).dump(), json(r.applied).dump());
  return r.to_json();
}

json shutdown(ControlContext& ctx, const json& args) {
  only_keys(args, {});
  ctx.shutdown();
  return {{"stopping", true}};
}

json version(ControlContext&, const json& args) {
  only_keys(args, {});
  return {{"version", kVersion}, {"protocol", 1}};
}

json list_commands(ControlContext&, const json& args);

const std::array kCommands = {
    Command{"list-commands", "{}", "every command with its arguments", list_commands},
    Command{"version", "{}", "daemon and protocol version", version},
    Command{"status", "{}", "name, uptime, policy, view, buffer totals", status},
    Command{"ports", "{}", "per-port counters (since counters.reset)", ports},
    Command{"latency", "{}",
            "per port, where frames' time goes: histograms of the wake-up, ring-to-RX, "
            "RX-to-queued and RX-to-sent hops (since counters.reset)",
            latency},
    Command{"queues", "{}",
            "per-queue occupancy, threshold, peak, admitted, drops by reason, ECN marks, "
            "queueing delay p50/p99 (counters since counters.reset)",
            queues},
    Command{"config", "{}", "the effective configuration as TOML (loadable by sharebufd)", config},
    Command{"config.reload", "{}",
            "read the configuration file again and apply what can be applied live (as SIGHUP); "
            "reports what was applied and what takes a restart",
            config_reload, true},
    Command{"config.set", "{\"set\": [\"section.key=value\", ...]}",
            "change the running configuration with the overrides of sharebufd --set (e.g. "
            "policy.alpha=2, buffer.view=probe, ports.p2.rate=50Mbit): applied live as a reload "
            "applies a file; a key that takes a restart is refused and nothing changes",
            config_set, true},
    Command{"policy.get", "{}", "the active policy: name, parameters, internal state", policy_get},
    Command{"policy.set", "{\"name\": string (default: the active one), \"params\": object}",
            "validate, then swap the policy live; queued frames stay and stay accounted",
            policy_set, true},
    Command{"policy.list", "{}", "every policy with its parameters and defaults", policy_list},
    Command{"view.set",
            "{\"mode\": \"exact\"|\"probe\", \"probe_interval_us\": number, "
            "\"probe_delay_us\": number}",
            "how admission reads occupancy: live counters, or probe registers taken every "
            "interval (1 us - 1 s) and seen a delay later",
            view_set, true},
    Command{"trim.get", "{}",
            "trimming: trim_size, trim_fix_lengths, trim_dscp, return_dscp, the mode and the "
            "Tofino approximation's settings; per class the overflow action and return "
            "threshold; per port the trim queue and DSCP",
            trim_get},
    Command{"trim.set",
            "{\"trim_size\": 64-9216, \"trim_fix_lengths\": bool, \"trim_dscp\": -1-63, "
            "\"return_dscp\": -1-63, \"class\": name, \"overflow\": \"drop\"|\"trim\"|"
            "\"return-to-sender\", \"return_threshold\": size or cells, \"port\": name, "
            "\"trim_queue\": int, \"trim_dscp_toward\": -1-63, \"mode\": \"ideal\"|"
            "\"tofino-approx\", \"meters\": \"three\"|\"two\"|\"fixed\"|\"mirror\", "
            "\"meter_burst\": bytes, "
            "\"t0\": \"6us\", \"t1\": \"12us\", \"recirc_rate\": \"10Gbit\", "
            "\"recirc_queue\": bytes, \"recirc_latency\": \"1us\", \"trim_newest\": 0-1}",
            "change trimming live; replies with every setting", trim_set, true},
    Command{"counters.reset", "{}", "start counting from zero (and reset the peaks)",
            counters_reset, true},
    Command{"watch", "{\"interval_us\": number >= 100}",
            "stream a sample every interval until the client closes", watch},
    Command{"capture.start",
            "{\"path\": string, \"mode\": \"drops\"|\"all\", \"max_bytes\": integer, "
            "\"per_port\": bool, \"overwrite\": bool, \"stamps\": \"admission\"|\"ring\"}",
            "write refused frames (default) or every arrival to a new pcap file below [control] "
            "capture_dir (per_port: one file <path>-<port>.pcap per ingress port), up to "
            "max_bytes in all (default 100 MB); stamps (mode all): the time admission used "
            "(default) or when the frame reached its port's ring",
            capture_start, true},
    Command{"capture.stop", "{}", "close the capture file; reports frames written and missed",
            capture_stop, true},
    Command{"shutdown", "{}", "stop the daemon as SIGTERM would", shutdown, true},
};

json list_commands(ControlContext&, const json& args) {
  only_keys(args, {});
  json out = json::array();
  for (const Command& c : kCommands)
    out.push_back({{"name", c.name}, {"args", c.usage}, {"help", c.help}, {"admin", c.admin}});
  return out;
}

// A policy parameter (JSON) as a TOML value.
void put_toml(toml::table& t, const std::string& key, const json& v) {
  if (v.is_boolean()) {
    t.insert_or_assign(key, v.get<bool>());
  } else if (v.is_number_integer()) {
    t.insert_or_assign(key, v.get<int64_t>());
  } else if (v.is_number()) {
    t.insert_or_assign(key, v.get<double>());
  } else if (v.is_string()) {
    t.insert_or_assign(key, v.get<std::string>());
  } else if (v.is_array()) {
    toml::array a;
    for (const json& e : v) {
      if (e.is_number_integer()) {
        a.push_back(e.get<int64_t>());
      } else if (e.is_number()) {
        a.push_back(e.get<double>());
      } else if (e.is_string()) {
        a.push_back(e.get<std::string>());
      }
    }
    t.insert_or_assign(key, std::move(a));
  }
}

}  // namespace

bool is_counter(std::string_view key) {
  for (std::string_view k : kCounterKeys)
    if (k == key) return true;
  return false;
}

std::span<const Command> control_commands() {
  return kCommands;
}

json error_reply(std::string_view message, const json& id, std::string_view code) {
  json r = {{"ok", false}, {"error", message}, {"code", code}};
  if (!id.is_null()) r["id"] = id;
  return r;
}

ParsedRequest parse_request(std::string_view line) {
  if (line.size() > kMaxRequestBytes) throw RequestError("request longer than 1 MiB");
  // Before anything recursive (nlohmann::json's copy and destructor recurse) touches it.
  if (common::json_nesting_depth(line) > common::kMaxJsonDepth) {
    throw RequestError("request nested more than " + std::to_string(common::kMaxJsonDepth) +
                       " levels deep");
  }
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded()) throw RequestError("malformed JSON");
  if (!j.is_object()) throw RequestError("a request must be a JSON object with \"cmd\"");
  ParsedRequest r;
  if (j.contains("id")) r.id = j["id"];
  if (!j.contains("cmd")) throw RequestError("missing \"cmd\"");
  if (!j["cmd"].is_string()) throw RequestError("\"cmd\" must be a string");
  r.cmd = j["cmd"].get<std::string>();
  if (j.contains("args")) {
    if (!j["args"].is_object()) throw RequestError("\"args\" must be an object");
    r.args = j["args"];
  }
  for (const auto& [k, v] : j.items()) {
    if (k != "cmd" && k != "args" && k != "id")
      throw RequestError("unknown request field '" + k + "' (fields: cmd, args, id)");
  }
  return r;
}

json handle_request(ControlContext& ctx, std::string_view line, const Peer& peer) {
  ParsedRequest req;
  try {
    req = parse_request(line);
  } catch (const RequestError& e) {
    return error_reply(e.what(), nullptr, e.code());
  }
  for (const Command& c : kCommands) {
    if (c.name != req.cmd) continue;
    if (c.admin && !peer.admin) {
      return error_reply(req.cmd +
                             ": permission denied: it changes the switch, and this client "
                             "(uid " +
                             std::to_string(peer.uid) + ", gid " + std::to_string(peer.gid) +
                             ") is read-only ([control] admin_group)",
                         req.id, "forbidden");
    }
    try {
      json r = {{"ok", true}, {"result", c.handler(ctx, req.args)}};
      if (!req.id.is_null()) r["id"] = req.id;
      return r;
    } catch (const RequestError& e) {
      return error_reply(req.cmd + ": " + e.what(), req.id, e.code());
    } catch (const std::exception& e) {
      return error_reply(req.cmd + ": internal error: " + e.what(), req.id, "internal");
    }
  }
  return error_reply("unknown command '" + req.cmd + "' (try list-commands)", req.id);
}

uint64_t watch_interval_ns(const json& args) {
  only_keys(args, {"interval_us"});
  if (!args.contains("interval_us")) return 10'000'000;  // 10 ms
  const json& v = args["interval_us"];
  if (!v.is_number() || v.get<double>() < static_cast<double>(kMinWatchIntervalUs) ||
      v.get<double>() > 60e6)
    throw RequestError("argument 'interval_us' must be a number from 100 to 60000000");
  return static_cast<uint64_t>(v.get<double>() * 1000);
}

json stats_since_reset(const ControlContext& ctx) {
  json stats = ctx.sw.stats();
  if (!ctx.baseline.is_null()) {
    subtract(stats, ctx.baseline);
    stats["since_reset_s"] = static_cast<double>(datapath::monotonic_ns() - ctx.reset_ns) * 1e-9;
  }
  return stats;
}

std::string effective_config_toml(const ControlContext& ctx) {
  return effective_config_toml(ctx.config, ctx.config_text);
}

namespace {

// A rate as the file would state it: in the largest unit that keeps it exact.
std::string rate_text(uint64_t bps) {
  if (bps != 0 && bps % 1'000'000'000 == 0) return std::to_string(bps / 1'000'000'000) + "Gbit";
  if (bps != 0 && bps % 1'000'000 == 0) return std::to_string(bps / 1'000'000) + "Mbit";
  if (bps != 0 && bps % 1'000 == 0) return std::to_string(bps / 1'000) + "kbit";
  return std::to_string(bps);
}

// root[name] as a table, made if the file has none.
toml::table& table_of(toml::table& root, std::string_view name) {
  if (!root[name].is_table()) root.insert_or_assign(name, toml::table{});
  return *root[name].as_table();
}

}  // namespace

std::string effective_config_toml(const DaemonConfig& cfg, std::string_view text) {
  toml::table root;
  try {
    root = toml::parse(text, cfg.sw.source);
  } catch (const toml::parse_error&) {
    // Unreachable: the daemon started from this text.
  }
  // What the command line set over the file (sharebufd --log-level, --stats-file, --socket).
  table_of(root, "log").insert_or_assign("level", cfg.log_level);
  if (!cfg.stats_file.empty()) {
    table_of(root, "switch").insert_or_assign("stats_file", cfg.stats_file);
  } else if (toml::table* s = root["switch"].as_table()) {
    s->erase("stats_file");
  }
  if (!cfg.control_socket.empty())
    table_of(root, "control").insert_or_assign("socket", cfg.control_socket);
  toml::table policy;
  policy.insert_or_assign("name", cfg.sw.policy);
  for (const auto& [k, v] : cfg.sw.policy_params.values.items())
    put_toml(policy, k, v);
  root.insert_or_assign("policy", std::move(policy));
  {
    // The view keys of model/view_params.h, as the file states them.
    toml::table& b = table_of(root, "buffer");
    b.insert_or_assign("view", std::string(buffer::to_string(cfg.sw.buffer.view_mode)));
    b.insert_or_assign("probe_interval", std::to_string(cfg.sw.buffer.probe_interval_ns) + "ns");
    b.insert_or_assign("probe_delay", std::to_string(cfg.sw.buffer.probe_delay_ns) + "ns");
  }
  // Trimming as trim.set left it: [trimming], each class's overflow, each port's trim keys.
  const model::SwitchConfig& sw = cfg.sw;
  // Keys trim.set cannot change (pipelines, line_rate, ...) stay as the file had them.
  toml::table trimming = root["trimming"].as_table() ? *root["trimming"].as_table() : toml::table{};
  const json values = model::trim_params_json(sw.trim);
  for (const policies::ParamSpec& spec : model::kTrimParams) {
    const std::string key(spec.name);
    if (!model::trim_key_live(key)) continue;
    if (values.contains(key)) {
      put_toml(trimming, key, values[key]);
    } else {
      trimming.erase(key);  // at its default, which the file states by leaving it out
    }
  }
  root.insert_or_assign("trimming", std::move(trimming));
  if (toml::array* classes = root["classes"].as_array()) {
    for (toml::node& n : *classes) {
      toml::table* t = n.as_table();
      if (t == nullptr) continue;
      for (const auto& c : sw.classes) {
        if (c.traffic.name != t->get_as<std::string>("name")->get()) continue;
        t->insert_or_assign("overflow", std::string(model::to_string(c.overflow)));
        if (c.overflow == model::OverflowAction::kReturnToSender && c.return_threshold_cells != 0) {
          t->insert_or_assign("return_threshold", static_cast<int64_t>(c.return_threshold_cells));
        } else {
          t->erase("return_threshold");
        }
      }
    }
  }
  if (toml::array* ports = root["ports"].as_array()) {
    for (toml::node& n : *ports) {
      toml::table* t = n.as_table();
      if (t == nullptr) continue;
      for (const auto& p : sw.ports) {
        if (p.name != t->get_as<std::string>("interface")->get()) continue;
        // The rate as set live (a configuration reload).
        if (p.rate_bps != 0) {
          t->insert_or_assign("rate", rate_text(p.rate_bps));
        } else {
          t->erase("rate");
        }
        t->insert_or_assign("trim_queue", static_cast<int64_t>(p.trim_queue));
        if (p.trim_dscp_toward >= 0) {
          t->insert_or_assign("trim_dscp_toward", p.trim_dscp_toward);
        } else {
          t->erase("trim_dscp_toward");
        }
      }
    }
  }
  std::ostringstream out;
  out << root << "\n";
  return out.str();
}

}  // namespace sharebuf::mgmt

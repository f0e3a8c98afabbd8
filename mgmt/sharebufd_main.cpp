// sharebufd: the sharebuf switch daemon. Runs in the foreground and logs to stderr. No signal a
// user or a terminal can send stops it uncleanly (docs/running.md, "Signals"):
//   SIGTERM, SIGINT, SIGQUIT, SIGXCPU  a clean stop: counters reported, every cell back in the
//                                      pool, the accounting checked, the ports restored;
//   SIGHUP                             the configuration file read again and what can change live
//                                      applied (mgmt/config_reload.h); a broken file changes
//                                      nothing;
//   SIGUSR1                            the counters written to the stats file;
//   SIGPIPE, SIGXFSZ                   ignored: a write fails with EPIPE/EFBIG and is handled (a
//                                      log line to a dead reader is counted as lost);
//   SIGUSR2, SIGALRM, SIGVTALRM,
//   SIGPROF, SIGIO, SIGPWR, SIGSTKFLT,
//   SIGRTMIN..SIGRTMAX                 logged (at most once a second) and ignored.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/safe_output.h"
#include "common/version.h"
#include "datapath/switch.h"
#include "mgmt/config_loader.h"
#include "mgmt/config_reload.h"
#include "mgmt/control_server.h"
#include "mgmt/metrics_server.h"
#include "mgmt/metrics_text.h"
#include "mgmt/stderr_sink.h"
#include "mgmt/text_table.h"
#include "model/trim_params.h"

namespace {

using sharebuf::mgmt::DaemonConfig;

// The stats file: written beside itself and renamed over it (common/safe_output.h), never through
// a name another user prepared.
void write_stats(const nlohmann::json& stats, const std::string& path) {
  if (path.empty()) return;
  try {
    sharebuf::common::replace_file(path, stats.dump(2) + "\n");
  } catch (const sharebuf::common::OutputError& e) {
    spdlog::error("stats file: {}", e.what());
  }
}

// The signals the main thread takes (sigtimedwait): blocked in every thread, so no default action
// (most of them terminate) can run.
sigset_t daemon_signals() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGXCPU, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
                  SIGPROF, SIGIO, SIGPWR, SIGSTKFLT})
    sigaddset(&s, sig);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig)
    sigaddset(&s, sig);
  return s;
}

bool stops(int sig) {
  return sig == SIGINT || sig == SIGTERM || sig == SIGQUIT || sig == SIGXCPU;
}

std::string signal_name(int sig) {
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// The stats file's path: the main thread writes the file, a reload (on the control thread) may
// change the path.
struct StatsPath {
  std::mutex mutex;
  std::string path;
  std::string get() {
    std::lock_guard lock(mutex);
    return path;
  }
  void set(const std::string& p) {
    std::lock_guard lock(mutex);
    path = p;
  }
};

size_t open_descriptors() {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

// Room for [control] max_clients connections beside what the daemon holds already (ports,
// rings, eventfds) and a margin for captures: the soft limit on open files is raised as far as
// the hard one allows; below that the daemon refuses to start and says what to set, since a
// control thread out of descriptors cannot let the operator in.
void ensure_open_file_limit(size_t max_clients) {
  constexpr size_t kMargin = 32;
  const size_t wanted = open_descriptors() + max_clients + kMargin;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return;
  if (files.rlim_cur < wanted && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, std::max<rlim_t>(wanted, 4096));
    setrlimit(RLIMIT_NOFILE, &files);
  }
  if (files.rlim_cur < wanted) {
    throw std::runtime_error(
        "open files are limited to " + std::to_string(files.rlim_cur) + " (hard limit " +
        std::to_string(files.rlim_max) +
        "): [control] max_clients = " + std::to_string(max_clients) + " needs at least " +
        std::to_string(wanted) + "; raise the limit (ulimit -n " + std::to_string(wanted) +
        ", systemd LimitNOFILE=" + std::to_string(wanted) + ") or lower max_clients");
  }
}

int run(const DaemonConfig& cfg, const sharebuf::mgmt::CommandLineOverrides& overrides,
        const std::string& config_path, bool print_stats,
        const std::shared_ptr<sharebuf::mgmt::StderrSink>& log_sink) {
  // Blocked in main() before anything else, so every thread inherits the mask; this thread
  // takes them with sigtimedwait.
  const sigset_t signals = daemon_signals();

  sharebuf::datapath::Switch sw(cfg.sw);
  if (cfg.control_enabled) ensure_open_file_limit(cfg.control.max_clients);
  for (const auto& w : sw.warnings())
    spdlog::warn("{}", w);
  sharebuf::datapath::SwitchControl& sc = sw.control();
  sharebuf::mgmt::ControlContext control(sc, cfg, cfg.source_text);
  control.shutdown = [] { kill(getpid(), SIGTERM); };
  control.config_path = config_path;
  control.log_lines_lost = [log_sink] { return log_sink->lost(); };
  control.overrides = overrides;
  StatsPath stats_path;
  stats_path.set(cfg.stats_file);
  control.on_reload = [&stats_path](const DaemonConfig& now) { stats_path.set(now.stats_file); };
  std::unique_ptr<sharebuf::mgmt::ControlServer> server;
  if (cfg.control_enabled) {
    server = std::make_unique<sharebuf::mgmt::ControlServer>(
        control, cfg.control_socket.empty() ? sharebuf::mgmt::default_socket_path(cfg.sw.name)
                                            : cfg.control_socket);
  }
  // Bound before the switch starts, so that an address in use stops the daemon before it
  // forwards a frame.
  std::unique_ptr<sharebuf::mgmt::MetricsServer> metrics;
  if (!cfg.metrics_listen.empty()) {
    metrics = std::make_unique<sharebuf::mgmt::MetricsServer>(
        sharebuf::mgmt::parse_listen_address(cfg.metrics_listen), [&sc, log_sink] {
          nlohmann::json stats = sc.stats_from_other_thread();
          stats["daemon"] = {{"log_lines_lost", log_sink->lost()}};
          return sharebuf::mgmt::openmetrics_text(stats);
        });
  }
  sw.start();
  if (server) {
    server->start();
    spdlog::info("control socket {}", server->path());
  }
  if (metrics) {
    metrics->start();
    spdlog::info("metrics on http://{}/metrics", metrics->address());
  }
  const nlohmann::json status = sc.status();
  spdlog::info("sharebufd '{}' running: {} ports, {} queues, buffer {} cells of {} B, policy {}",
               cfg.sw.name, status["ports"].get<size_t>(), status["queues"].get<uint32_t>(),
               status["capacity_cells"].get<uint32_t>(), status["cell_bytes"].get<uint32_t>(),
               cfg.sw.policy);
  for (const std::string& line : sc.describe_ports())
    spdlog::info("{}", line);
  // A reload runs on the control thread, which owns the control context; without a control
  // socket there is no such thread and this one runs it.
  auto reload = [&] {
    const sharebuf::mgmt::ReloadReport r = sharebuf::mgmt::reload_config(control);
    if (!r.error.empty()) {
      spdlog::error("SIGHUP: {}", r.summary(config_path));
    } else if (!r.restart.empty()) {
      spdlog::warn("SIGHUP: {}", r.summary(config_path));
    } else {
      spdlog::info("SIGHUP: {}", r.summary(config_path));
    }
  };
  uint64_t ignored = 0;
  int ignored_last = 0;
  pid_t ignored_from = 0;
  auto last_report = std::chrono::steady_clock::now() - std::chrono::seconds(2);
  for (;;) {
    // Between signals, once a second: has an interface's MTU changed under the switch?
    const timespec second{1, 0};
    siginfo_t info{};
    const int sig = sigtimedwait(&signals, &info, &second);
    const auto now = std::chrono::steady_clock::now();
    if (ignored != 0 && now - last_report >= std::chrono::seconds(1)) {
      spdlog::warn("ignored {} signal(s) with no meaning to sharebufd (the last {}, from pid {})",
                   ignored, signal_name(ignored_last), ignored_from);
      ignored = 0;
      last_report = now;
    }
    if (sig < 0) {
      for (const auto& change : sw.check_links())
        spdlog::warn("{}", change);
      continue;
    }
    if (sig == SIGUSR1) {
      nlohmann::json stats = sc.stats_from_other_thread();
      stats["daemon"] = {{"log_lines_lost", log_sink->lost()}};
      write_stats(stats, stats_path.get());
      continue;
    }
    if (sig == SIGHUP) {
      spdlog::info("SIGHUP from pid {}: reading {} again", info.si_pid, config_path);
      if (server) {
        server->post(reload);
      } else {
        reload();
      }
      continue;
    }
    if (stops(sig)) {
      spdlog::info("{} received from pid {}, stopping", signal_name(sig), info.si_pid);
      break;
    }
    ++ignored;
    ignored_last = sig;
    ignored_from = info.si_pid;
    if (now - last_report >= std::chrono::seconds(1)) {
      spdlog::warn("{} from pid {} ignored: it has no meaning to sharebufd (docs/running.md)",
                   signal_name(sig), info.si_pid);
      ignored = 0;
      last_report = now;
    }
  }
  if (metrics) metrics->stop();
  if (server) server->stop();
  sw.stop();
  // Report with the queues as they were at the stop, then free every frame.
  // The workers are stopped and the control server too: this thread is the only reader.
  nlohmann::json final_stats = sc.stats();
  final_stats["daemon"] = {{"log_lines_lost", log_sink->lost()}};
  write_stats(final_stats, stats_path.get());
  if (print_stats) std::cout << sharebuf::mgmt::switch_stats_table(final_stats) << std::flush;
  sw.release_queued();
  const auto errors = sc.check_accounting();
  for (const auto& e : errors)
    spdlog::error("accounting: {}", e);
  const nlohmann::json after = sc.stats()["buffer"];
  spdlog::info("stopped; {} of {} pool cells free", after["pool_free_cells"].get<uint64_t>(),
               after["pool_physical_cells"].get<uint64_t>());
  return errors.empty() ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  // From the first instruction on: a signal that arrives while the configuration is read waits
  // for the main loop (a stop then stops at once) instead of killing the process.
  const sigset_t signals = daemon_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Named, not argv[0]: the usage line reads the same from any path (and in the man page).
  CLI::App app{"sharebufd: user-space Ethernet switch with a shared cell buffer", "sharebufd"};
  app.set_version_flag("--version", "sharebufd " + std::string(sharebuf::common::kVersion));
  std::string config_path;
  std::string log_level;
  std::string stats_file;
  bool check_only = false;
  bool print_stats = false;
  bool trimming_markdown = false;
  auto* config = app.add_option("-c,--config", config_path, "TOML configuration file");
  app.add_flag("--trimming-markdown", trimming_markdown,
               "print docs/configuration.md's [trimming] rows from the declared keys and exit");
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error, critical or off (overrides [log] level)");
  app.add_option(
      "--stats-file", stats_file,
      "write counters as JSON here on exit and on SIGUSR1 (overrides [switch] stats_file)");
  std::string socket_path;
  app.add_option("--socket", socket_path,
                 "control socket path (overrides [control] socket; default "
                 "/run/sharebuf/<name>.sock)");
  std::vector<std::string> sets;
  app.add_option("--set", sets,
                 "a setting over the configuration file: SECTION.KEY=VALUE as in the file, e.g. "
                 "policy.alpha=2, buffer.view=probe, ports.p2.rate=50Mbit; repeatable, in order; "
                 "kept over the file on SIGHUP, and written into the effective configuration");
  app.add_flag("--check-config", check_only, "validate the configuration and exit");
  app.add_flag("--print-stats", print_stats, "print the port and queue counters on exit");
  CLI11_PARSE(app, argc, argv);
  if (trimming_markdown) {
    std::cout << sharebuf::model::trim_params_markdown();
    return 0;
  }
  if (config->count() == 0) {
    std::cerr << app.help() << "sharebufd: --config is required\n";
    return 2;
  }

  // A write to a pipe whose reader is gone fails with EPIPE instead of killing the daemon; a file
  // past its size limit fails with EFBIG. Both are handled where they happen.
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  const auto log_sink = std::make_shared<sharebuf::mgmt::StderrSink>();
  auto logger = std::make_shared<spdlog::logger>("sharebufd", log_sink);
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  try {
    DaemonConfig cfg = sharebuf::mgmt::load_config_file(config_path, sets);
    // The command line's options over the file: said in the log, and in the effective
    // configuration (the control socket's `config`).
    sharebuf::mgmt::CommandLineOverrides overrides;
    overrides.sets = sets;
    for (const std::string& s : sets)
      std::cerr << "sharebufd: --set " << s << " over " << config_path << "\n";
    auto over = [](std::string& field, const std::string& option, const char* key, const char* flag,
                   std::optional<std::string>& kept) {
      if (option.empty()) return;
      if (!field.empty() && field != option)
        std::cerr << "sharebufd: " << flag << " " << option << " over " << key << " '" << field
                  << "'\n";
      field = option;
      kept = option;
    };
    over(cfg.log_level, log_level, "[log] level", "--log-level", overrides.log_level);
    over(cfg.stats_file, stats_file, "[switch] stats_file", "--stats-file", overrides.stats_file);
    over(cfg.control_socket, socket_path, "[control] socket", "--socket", overrides.socket);
    const auto level = spdlog::level::from_str(cfg.log_level);
    if (level == spdlog::level::off && cfg.log_level != "off") {
      std::cerr << "sharebufd: --log-level: unknown level '" << cfg.log_level << "'\n";
      return 2;
    }
    spdlog::set_level(level);
    sharebuf::mgmt::validate_config(cfg.sw);
    // Written by root: never in a directory where another user could swap what it writes.
    if (!cfg.stats_file.empty()) {
      const std::filesystem::path stats(cfg.stats_file);
      const std::string dir = stats.has_parent_path() ? stats.parent_path().string() : ".";
      if (const std::string why = sharebuf::common::unsafe_directory(dir); !why.empty()) {
        std::cerr << "sharebufd: the stats file " << cfg.stats_file << " ([switch] stats_file or "
                  << "--stats-file): " << why << "\n";
        return 2;
      }
    }
    if (check_only) {
      std::cout << config_path << ": OK (" << cfg.sw.ports.size() << " ports, "
                << cfg.sw.classes.size() << " classes, policy " << cfg.sw.policy << ", buffer "
                << cfg.sw.buffer.capacity_cells << " cells of " << cfg.sw.buffer.cell_bytes
                << " B)\n";
      return 0;
    }
    return run(cfg, overrides, config_path, print_stats, log_sink);
  } catch (const sharebuf::policies::ConfigError& e) {
    std::cerr << "sharebufd: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}

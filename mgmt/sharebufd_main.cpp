// sharebufd: the sharebuf switch daemon. Runs in the foreground, logs to stderr, stops cleanly on
// SIGTERM/SIGINT (within a second, every cell back in the pool), writes its counters to the stats
// file on exit and on SIGUSR1.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "datapath/switch.h"
#include "mgmt/config_loader.h"
#include "mgmt/control_server.h"
#include "mgmt/text_table.h"
#include "model/trim_params.h"

namespace {

using sharebuf::mgmt::DaemonConfig;

bool write_stats(const nlohmann::json& stats, const std::string& path) {
  if (path.empty()) return true;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) return false;
    out << stats.dump(2) << "\n";
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

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

int run(const DaemonConfig& cfg, bool print_stats) {
  // Block the stop signals in every thread; the main thread takes them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  sharebuf::datapath::Switch sw(cfg.sw);
  if (cfg.control_enabled) ensure_open_file_limit(cfg.control.max_clients);
  for (const auto& w : sw.warnings())
    spdlog::warn("{}", w);
  sharebuf::datapath::SwitchControl& sc = sw.control();
  sharebuf::mgmt::ControlContext control(sc, cfg, cfg.source_text);
  control.shutdown = [] { kill(getpid(), SIGTERM); };
  std::unique_ptr<sharebuf::mgmt::ControlServer> server;
  if (cfg.control_enabled) {
    server = std::make_unique<sharebuf::mgmt::ControlServer>(
        control, cfg.control_socket.empty() ? sharebuf::mgmt::default_socket_path(cfg.sw.name)
                                            : cfg.control_socket);
  }
  sw.start();
  if (server) {
    server->start();
    spdlog::info("control socket {}", server->path());
  }
  const nlohmann::json status = sc.status();
  spdlog::info("sharebufd '{}' running: {} ports, {} queues, buffer {} cells of {} B, policy {}",
               cfg.sw.name, status["ports"].get<size_t>(), status["queues"].get<uint32_t>(),
               status["capacity_cells"].get<uint32_t>(), status["cell_bytes"].get<uint32_t>(),
               cfg.sw.policy);
  for (const std::string& line : sc.describe_ports())
    spdlog::info("{}", line);
  for (;;) {
    // Between signals, once a second: has an interface's MTU changed under the switch?
    const timespec second{1, 0};
    const int sig = sigtimedwait(&signals, nullptr, &second);
    if (sig < 0) {
      for (const auto& change : sw.check_links())
        spdlog::warn("{}", change);
      continue;
    }
    if (sig == SIGUSR1) {
      if (!write_stats(sc.stats_from_other_thread(), cfg.stats_file))
        spdlog::error("cannot write {}", cfg.stats_file);
      continue;
    }
    spdlog::info("{} received, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    break;
  }
  if (server) server->stop();
  sw.stop();
  // Report with the queues as they were at the stop, then free every frame.
  // The workers are stopped and the control server too: this thread is the only reader.
  const nlohmann::json final_stats = sc.stats();
  if (!write_stats(final_stats, cfg.stats_file)) spdlog::error("cannot write {}", cfg.stats_file);
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
  CLI::App app{"sharebufd: user-space Ethernet switch with a shared cell buffer"};
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

  auto logger = spdlog::stderr_color_mt("sharebufd");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  try {
    DaemonConfig cfg = sharebuf::mgmt::load_config_file(config_path);
    if (!log_level.empty()) cfg.log_level = log_level;
    if (!stats_file.empty()) cfg.stats_file = stats_file;
    if (!socket_path.empty()) cfg.control_socket = socket_path;
    const auto level = spdlog::level::from_str(cfg.log_level);
    if (level == spdlog::level::off && cfg.log_level != "off") {
      std::cerr << "sharebufd: --log-level: unknown level '" << cfg.log_level << "'\n";
      return 2;
    }
    spdlog::set_level(level);
    sharebuf::mgmt::validate_config(cfg.sw);
    if (check_only) {
      std::cout << config_path << ": OK (" << cfg.sw.ports.size() << " ports, "
                << cfg.sw.classes.size() << " classes, policy " << cfg.sw.policy << ", buffer "
                << cfg.sw.buffer.capacity_cells << " cells of " << cfg.sw.buffer.cell_bytes
                << " B)\n";
      return 0;
    }
    return run(cfg, print_stats);
  } catch (const sharebuf::policies::ConfigError& e) {
    std::cerr << "sharebufd: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}

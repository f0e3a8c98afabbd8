// sharebufctl: the shell's view of a running sharebufd over its control socket. Every protocol
// command, human-readable by default, --json for scripts; `watch` streams samples (optionally to
// CSV) and `top` is a live terminal view of every queue.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/overrides.h"
#include "mgmt/text_table.h"

using nlohmann::json;
using sharebuf::mgmt::fmt_num;
using sharebuf::mgmt::human_ns;
using sharebuf::mgmt::queues_table;
using sharebuf::mgmt::render_table;
using sharebuf::mgmt::TableRow;

namespace {

constexpr const char* kUsage = R"(usage: sharebufctl [options] COMMAND [ARGS...]

options:
  -s, --socket PATH   control socket (default /run/sharebuf/<name>.sock)
  -n, --name NAME     switch name, for the default socket path (default sharebuf)
  --json              print the reply's result as JSON instead of a table
  --timeout SECONDS   wait this long for a reply (default 5)
  -h, --help          this text

commands (ARGS are key=value; values are JSON if they parse, else strings):
  status | ports | queues | latency | config | version | list-commands
  config.reload                         read sharebufd's configuration file again (as SIGHUP)
  set SECTION.KEY=VALUE...              change the running configuration (config.set), e.g.
                                        set policy.alpha=2 buffer.view=probe ports.p2.rate=50Mbit
  policy.get
  policy.set [NAME] [key=value...]      e.g. policy.set dt alpha=2
  policy.list
  view.set [exact|probe] [probe_interval_us=N] [probe_delay_us=N]
  counters.reset
  trim.get
  trim.set [key=value...]               e.g. trim.set class=data overflow=trim trim_size=256
  watch [interval_us=N] [--csv FILE] [--count N] [--duration SECONDS]
  top [interval_ms=N] [--count N]       live view of every queue (Ctrl-C ends it)
  capture.start path=FILE [mode=drops|all] [max_bytes=N] [per_port=true] [stamps=ring]
  capture.stop
  shutdown
  raw JSON                              send one request line as is
)";

volatile sig_atomic_t g_stop = 0;

[[noreturn]] void die(const std::string& msg, int code = 1) {
  std::cerr << "sharebufctl: " << msg << "\n";
  std::exit(code);
}

class Connection {
 public:
  Connection(const std::string& path, double timeout_s)
      : timeout_ms_(static_cast<int>(timeout_s * 1000)) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.size() >= sizeof(a.sun_path)) die("socket path too long: " + path);
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0)
      die("cannot connect to " + path + ": " + std::strerror(errno) +
          " (is sharebufd running? see --socket / --name)");
  }
  ~Connection() { close(fd_); }

  void send_line(const std::string& line) {
    std::string data = line + "\n";
    size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) die(std::string("send: ") + std::strerror(errno));
      off += static_cast<size_t>(n);
    }
  }
  // The next line, or nullopt on timeout (timeout_ms < 0: wait forever) or EOF.
  std::optional<std::string> read_line(int timeout_ms) {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, timeout_ms);
      if (r == 0 || g_stop) return std::nullopt;
      if (r < 0) {
        if (errno == EINTR) return std::nullopt;
        die(std::string("poll: ") + std::strerror(errno));
      }
      char tmp[65536];
      const ssize_t n = read(fd_, tmp, sizeof(tmp));
      if (n <= 0) return std::nullopt;
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }
  json request(const json& req) {
    send_line(req.dump());
    const auto line = read_line(timeout_ms_);
    if (!line) die("no reply from the daemon within the timeout");
    json reply = json::parse(*line, nullptr, false);
    if (reply.is_discarded()) die("malformed reply: " + *line);
    return reply;
  }

 private:
  int fd_ = -1;
  int timeout_ms_;
  std::string buf_;
};

json key_values(const std::vector<std::string>& words) {
  json args = json::object();
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) die("expected key=value, got '" + w + "'", 2);
    // The value as every override reads it (config/overrides.h): a TOML value, or the text.
    args[w.substr(0, eq)] = sharebuf::config::override_value(w.substr(eq + 1));
  }
  return args;
}

json result_or_die(const json& reply) {
  if (!reply.value("ok", false)) die(reply.value("error", std::string("request failed")));
  return reply["result"];
}

void print_table(const TableRow& header, const std::vector<TableRow>& rows) {
  std::fputs(render_table(header, rows).c_str(), stdout);
}

uint64_t drops_of(const json& q) {
  uint64_t n = 0;
  for (const auto& [k, v] : q["dropped"].items())
    n += v.get<uint64_t>();
  return n;
}

void print_human(const std::string& cmd, const json& r) {
  if (cmd == "queues") {
    std::fputs(queues_table(r).c_str(), stdout);
  } else if (cmd == "ports") {
    std::vector<std::vector<std::string>> rows;
    for (const json& p : r) {
      rows.push_back(
          {p["interface"].get<std::string>(),
           p["rate_bps"].get<uint64_t>() ? fmt_num(json(p["rate_bps"].get<double>() / 1e6)) + "M"
                                         : "-",
           fmt_num(p["rx_frames"]), fmt_num(p["tx_frames"]), fmt_num(p["ring_drops"]),
           p.contains("before_socket") ? fmt_num(p["before_socket"]) : "-",
           fmt_num(p["malformed_total"]), fmt_num(p["oversize"]), fmt_num(p["tx_errors"])});
    }
    print_table({"port", "rate", "rx", "tx", "ring_drops", "before_socket", "malformed", "oversize",
                 "tx_errors"},
                rows);
  } else if (cmd == "latency") {
    std::vector<std::vector<std::string>> rows;
    for (const json& p : r) {
      // In the order a frame passes them (the reply's object is sorted by name).
      for (const char* hop : {"wakeup", "ring_to_rx", "rx_to_queued", "rx_to_sent"}) {
        if (!p["hops"].contains(hop)) continue;
        const json& h = p["hops"][hop];
        rows.push_back({p["interface"].get<std::string>(), hop, fmt_num(h["count"]),
                        human_ns(h["p50_ns"].get<uint64_t>()),
                        human_ns(h["p99_ns"].get<uint64_t>()),
                        human_ns(h["p999_ns"].get<uint64_t>())});
      }
    }
    print_table({"port", "hop", "frames", "p50", "p99", "p99.9"}, rows);
  } else if (cmd == "config") {
    std::cout << r["toml"].get<std::string>();
  } else if (cmd == "config.reload" || cmd == "config.set") {
    for (const char* part : {"applied", "command_line_kept", "restart_needed"}) {
      const char* title = std::string_view(part) == "applied" ? "applied live"
                          : std::string_view(part) == "restart_needed"
                              ? "not applied (they take a restart)"
                              : "kept from sharebufd's command line";
      if (r[part].empty()) continue;
      std::printf("%s:\n", title);
      for (const json& line : r[part])
        std::printf("  %s\n", line.get<std::string>().c_str());
    }
    if (r["applied"].empty() && r["restart_needed"].empty()) std::printf("nothing changed\n");
  } else if (cmd == "list-commands") {
    for (const json& c : r)
      std::printf("%-15s %s\n%15s %s\n", c["name"].get<std::string>().c_str(),
                  c["help"].get<std::string>().c_str(), "", c["args"].get<std::string>().c_str());
  } else if (cmd == "policy.list") {
    for (const json& p : r) {
      std::printf("%s — %s\n", p["name"].get<std::string>().c_str(),
                  p["summary"].get<std::string>().c_str());
      for (const json& s : p["params"])
        std::printf("    %-18s %-7s default %-8s %s\n", s["name"].get<std::string>().c_str(),
                    s["type"].get<std::string>().c_str(), s["default"].get<std::string>().c_str(),
                    s["help"].get<std::string>().c_str());
    }
  } else if (cmd == "policy.get") {
    std::printf("policy %s\n", r["name"].get<std::string>().c_str());
    for (const auto& [k, v] : r["params"].items())
      std::printf("  %s = %s\n", k.c_str(), v.dump().c_str());
    std::printf("state:\n%s\n", r["state"].dump(2).c_str());
  } else if (r.is_object()) {
    for (const auto& [k, v] : r.items())
      std::printf("%-18s %s\n", k.c_str(), fmt_num(v).c_str());
  } else {
    std::cout << r.dump(2) << "\n";
  }
}

int run_watch(Connection& c, json args, const std::string& csv, long count, double duration_s,
              bool as_json) {
  const json reply = c.request({{"cmd", "watch"}, {"args", args}});
  result_or_die(reply);
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    if (!out) die("cannot write " + csv);
    out << "t_s,policy,port,queue,occupancy_cells,threshold_cells,dropped,total_cells,capacity_"
           "cells,trimmed\n";
  }
  const auto start = std::chrono::steady_clock::now();
  uint64_t t0 = 0;
  long n = 0;
  while (!g_stop && (count <= 0 || n < count)) {
    if (duration_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
            duration_s)
      break;
    const auto line = c.read_line(1000);
    if (!line) continue;
    const json s = json::parse(*line, nullptr, false);
    if (s.is_discarded()) die("malformed sample: " + *line);
    ++n;
    if (t0 == 0) t0 = s["t_ns"].get<uint64_t>();
    const double t = static_cast<double>(s["t_ns"].get<uint64_t>() - t0) * 1e-9;
    if (out.is_open()) {
      for (const json& q : s["queues"]) {
        out << t << "," << s["policy"].get<std::string>() << "," << q["port"].get<std::string>()
            << "," << q["queue"] << "," << q["occupancy_cells"] << "," << q["threshold_cells"]
            << "," << q["dropped"] << "," << s["occupancy_cells"] << "," << s["capacity_cells"]
            << "," << q.value("trimmed", json(0)) << "\n";
      }
    } else if (as_json) {
      std::cout << *line << "\n" << std::flush;
    } else {
      std::printf("%9.3fs %-9s total %6llu", t, s["policy"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(s["occupancy_cells"].get<uint64_t>()));
      for (const json& q : s["queues"])
        std::printf("  %s/%d %llu/%llu", q["port"].get<std::string>().c_str(),
                    q["queue"].get<int>(),
                    static_cast<unsigned long long>(q["occupancy_cells"].get<uint64_t>()),
                    static_cast<unsigned long long>(q["threshold_cells"].get<uint64_t>()));
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  if (out.is_open()) std::cerr << "sharebufctl: " << n << " samples written to " << csv << "\n";
  return 0;
}

int run_top(Connection& c, double interval_ms, long count) {
  std::map<uint64_t, uint64_t> last_drops;
  std::map<uint64_t, uint64_t> last_trims;
  auto last = std::chrono::steady_clock::now();
  for (long n = 0; !g_stop && (count <= 0 || n < count); ++n) {
    const json st = result_or_die(c.request({{"cmd", "status"}}));
    const json qs = result_or_die(c.request({{"cmd", "queues"}}));
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::max(1e-3, std::chrono::duration<double>(now - last).count());
    last = now;
    const double cap = st["capacity_cells"].get<double>();
    constexpr int kBar = 40;
    std::printf("\x1b[H\x1b[2J");
    std::printf("sharebuf %s  policy %s  view %s  buffer %llu/%llu cells (peak %llu)\n\n",
                st["name"].get<std::string>().c_str(), st["policy"].get<std::string>().c_str(),
                st["view"].get<std::string>().c_str(),
                static_cast<unsigned long long>(st["occupancy_cells"].get<uint64_t>()),
                static_cast<unsigned long long>(st["capacity_cells"].get<uint64_t>()),
                static_cast<unsigned long long>(st["peak_cells"].get<uint64_t>()));
    std::printf("%-12s %-*s %8s %8s %10s %10s %8s\n", "queue", kBar + 2,
                "occupancy (# ) vs threshold (|)", "occ", "thr", "drops/s", "trims/s", "p99");
    for (const json& q : qs) {
      const double occ = q["occupancy_cells"].get<double>();
      const double thr = q["threshold_cells"].get<double>();
      std::string bar(kBar, ' ');
      const int filled = static_cast<int>(std::min(1.0, occ / cap) * kBar + 0.5);
      for (int i = 0; i < filled; ++i)
        bar[static_cast<size_t>(i)] = '#';
      const int mark = std::min(kBar - 1, static_cast<int>(std::min(1.0, thr / cap) * kBar));
      bar[static_cast<size_t>(mark)] = '|';
      const uint64_t id = q["id"].get<uint64_t>();
      const uint64_t drops = drops_of(q);
      const double rate = last_drops.count(id)
                              ? static_cast<double>(drops - std::min(drops, last_drops[id])) / dt
                              : 0;
      last_drops[id] = drops;
      // Trimmed or returned to the sender: refused frames whose headers still went on.
      const uint64_t trims = q.value("trimmed", uint64_t{0}) + q.value("bounced", uint64_t{0});
      const double trim_rate =
          last_trims.count(id) ? static_cast<double>(trims - std::min(trims, last_trims[id])) / dt
                               : 0;
      last_trims[id] = trims;
      std::printf(
          "%-12s [%s] %8.0f %8.0f %10.0f %10.0f %8s\n",
          (q["interface"].get<std::string>() + "/" + std::to_string(q["queue"].get<int>())).c_str(),
          bar.c_str(), occ, thr, rate, trim_rate,
          human_ns(q["delay_p99_ns"].get<uint64_t>()).c_str());
    }
    std::fflush(stdout);
    usleep(static_cast<useconds_t>(interval_ms * 1000));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path;
  std::string name = "sharebuf";
  bool as_json = false;
  double timeout_s = 5;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die("option " + a + " needs a value", 2);
      return argv[++i];
    };
    if (!words.empty()) {
      words.push_back(a);
    } else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "-s" || a == "--socket") {
      socket_path = value();
    } else if (a == "-n" || a == "--name") {
      name = value();
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "--timeout") {
      timeout_s = std::atof(value().c_str());
    } else if (a.starts_with("-")) {
      die("unknown option " + a + " (see --help)", 2);
    } else {
      words.push_back(a);
    }
  }
  if (words.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  if (socket_path.empty()) socket_path = "/run/sharebuf/" + name + ".sock";
  signal(SIGINT, [](int) { g_stop = 1; });
  signal(SIGPIPE, SIG_IGN);

  std::string cmd = words[0];
  std::vector<std::string> rest(words.begin() + 1, words.end());
  Connection c(socket_path, timeout_s);

  if (cmd == "raw") {
    if (rest.size() != 1) die("raw takes one JSON request", 2);
    c.send_line(rest[0]);
    const auto line = c.read_line(static_cast<int>(timeout_s * 1000));
    if (!line) die("no reply");
    std::cout << *line << "\n";
    return json::parse(*line, nullptr, false).value("ok", false) ? 0 : 1;
  }
  if (cmd == "watch" || cmd == "top") {
    std::string csv;
    long count = 0;
    double duration = 0;
    std::vector<std::string> kv;
    for (size_t i = 0; i < rest.size(); ++i) {
      auto value = [&]() -> std::string {
        if (i + 1 >= rest.size()) die(rest[i] + " needs a value", 2);
        return rest[++i];
      };
      if (rest[i] == "--csv") {
        csv = value();
      } else if (rest[i] == "--count") {
        count = std::atol(value().c_str());
      } else if (rest[i] == "--duration") {
        duration = std::atof(value().c_str());
      } else {
        kv.push_back(rest[i]);
      }
    }
    json args = key_values(kv);
    if (cmd == "top") {
      const double interval = args.value("interval_ms", 250.0);
      return run_top(c, interval, count);
    }
    return run_watch(c, args, csv, count, duration, as_json);
  }

  json args = json::object();
  if (cmd == "set") {
    // Passed as written: the daemon parses them as sharebufd --set does (config/overrides.h).
    cmd = "config.set";
    args["set"] = rest;
  } else if (cmd == "policy.set") {
    std::vector<std::string> kv;
    for (const std::string& w : rest) {
      if (w.find('=') == std::string::npos && !args.contains("name")) {
        args["name"] = w;
      } else {
        kv.push_back(w);
      }
    }
    json params = key_values(kv);
    if (!params.empty()) args["params"] = params;
  } else if (cmd == "view.set") {
    std::vector<std::string> kv;
    for (const std::string& w : rest) {
      if (w == "exact" || w == "probe") {
        args["mode"] = w;
      } else {
        kv.push_back(w);
      }
    }
    args.update(key_values(kv));
  } else {
    args = key_values(rest);
  }
  const json reply = c.request({{"cmd", cmd}, {"args", args}});
  const json result = result_or_die(reply);
  if (as_json) {
    std::cout << result.dump(2) << "\n";
  } else {
    print_human(cmd, result);
  }
  return 0;
}

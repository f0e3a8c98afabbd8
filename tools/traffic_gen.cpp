// sharebuf-tg: a traffic generator that measures flow and query completion times.
//
//   sharebuf-tg server [--port 5500] [--duration S]
//   sharebuf-tg fixed  --servers IP[:PORT],... --flows M --size BYTES [options]
//   sharebuf-tg query  --servers IP[:PORT],... --size BYTES [--count N] [--rate Q/s] [--pool K]
//   sharebuf-tg websearch --servers IP[:PORT],... --load X --link-rate 100Mbit [--cdf FILE]
//   sharebuf-tg schedule --file CSV [--pool K] [--start-at UNIX_S] (--duration: every flow's end)
//   [options] options: --duration S (no new flow or query starts after it; default 10), --timeout S
//   (a started flow gets this long; default 5), --dscp N, --dscp-large N (websearch: flows of
//   100 KB or more), --csv FILE, --seed N
// The DSCP is set on the client's socket; the responses carry it when the server's namespace has
// net.ipv4.tcp_reflect_tos = 1 (the server's socket then takes the TOS of the client's SYN).
//
// A flow is a response: the client sends an 8-byte request (the size, big-endian) and the server
// answers with that many bytes. Its completion time runs from the moment the request is written
// (the first byte the flow sends) to the moment the last response byte is read, on the client's
// monotonic clock. `fixed` opens M connections at once; `query` asks every server for size/N
// bytes per query (query completion time = until the last response): with --rate, queries
// arrive open-loop at Poisson times and overlap, each on idle persistent connections from a pool
// (--pool per server, opened in advance; more are opened if they run out); with only --count,
// one after another on one connection per server; `websearch` opens a new connection per flow, with
// Poisson arrivals at `load` times the link rate and sizes from the web-search CDF, to random
// servers; `schedule` runs the flows a file lists (start_ms,kind,query,server,bytes: another
// engine's arrivals, e.g. sharebuf-sim's), each at its time on a new connection (or, for query
// responses, --pool K pooled ones), rows with the same query id >= 0 making one query, whose
// completion time runs from its start_ms. Every flow's connect time goes in the CSV (connect_ms;
// 0 on a pooled connection). Any failed connection makes the run exit non-zero, saying which
// and why.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/data_files.h"
#include "common/flow_size_cdf.h"
#include "common/units.h"

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

[[noreturn]] void die(const std::string& m, int code = 1) {
  std::cerr << "sharebuf-tg: " << m << "\n";
  std::exit(code);
}

struct Endpoint {
  sockaddr_in addr{};
  std::string text;
};

Endpoint parse_endpoint(const std::string& s, uint16_t default_port) {
  Endpoint e;
  e.text = s;
  const auto colon = s.find(':');
  const std::string host = s.substr(0, colon);
  e.addr.sin_family = AF_INET;
  e.addr.sin_port =
      htons(colon == std::string::npos ? default_port
                                       : static_cast<uint16_t>(std::stoi(s.substr(colon + 1))));
  if (inet_pton(AF_INET, host.c_str(), &e.addr.sin_addr) != 1)
    die("bad server address '" + s + "'", 2);
  return e;
}

bool write_all(int fd, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    const ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return false;
    }
    b += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes (discarding them) before `deadline`; false on EOF, error or timeout.
bool read_n(int fd, uint64_t n, uint64_t deadline_ns, std::string& why) {
  static thread_local std::vector<uint8_t> buf(1 << 16);
  while (n > 0) {
    const uint64_t t = now_ns();
    if (t >= deadline_ns) {
      why = "timed out with " + std::to_string(n) + " bytes missing";
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    const int r =
        poll(&p, 1, static_cast<int>(std::min<uint64_t>((deadline_ns - t) / 1'000'000 + 1, 1000)));
    if (r <= 0) continue;
    const ssize_t got = read(fd, buf.data(), std::min<uint64_t>(n, buf.size()));
    if (got == 0) {
      why = "connection closed with " + std::to_string(n) + " bytes missing";
      return false;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      why = std::string("read: ") + std::strerror(errno);
      return false;
    }
    n -= static_cast<uint64_t>(got);
  }
  return true;
}

int connect_to(const Endpoint& e, int dscp, std::string& why) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (dscp >= 0) {
    const int tos = dscp << 2;
    setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
  }
  if (connect(fd, reinterpret_cast<const sockaddr*>(&e.addr), sizeof(e.addr)) != 0) {
    why = "connect to " + e.text + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

struct FlowRecord {
  uint64_t id = 0;
  std::string kind;
  std::string server;
  uint64_t bytes = 0;
  uint64_t start_ns = 0;
  uint64_t fct_ns = 0;
  uint64_t connect_ns = 0;  // the handshake before it (0: on a connection already open)
  int64_t query = -1;
  bool ok = false;
  std::string why;
};

// One request/response on an open connection.
FlowRecord exchange(int fd, const Endpoint& e, uint64_t bytes, uint64_t deadline_ns) {
  FlowRecord r;
  r.server = e.text;
  r.bytes = bytes;
  uint8_t req[8];
  for (int i = 0; i < 8; ++i)
    req[i] = static_cast<uint8_t>(bytes >> (56 - 8 * i));
  r.start_ns = now_ns();
  if (!write_all(fd, req, sizeof(req))) {
    r.why = "request to " + e.text + ": " + std::strerror(errno);
    return r;
  }
  r.ok = read_n(fd, bytes, deadline_ns, r.why);
  if (!r.ok) r.why = e.text + ": " + r.why;
  r.fct_ns = now_ns() - r.start_ns;
  return r;
}

void serve_connection(int fd) {
  std::vector<uint8_t> data(1 << 16, 0x5a);
  for (;;) {
    uint8_t req[8];
    size_t got = 0;
    while (got < sizeof(req)) {
      const ssize_t n = read(fd, req + got, sizeof(req) - got);
      if (n <= 0) {
        close(fd);
        return;
      }
      got += static_cast<size_t>(n);
    }
    uint64_t bytes = 0;
    for (uint8_t b : req)
      bytes = (bytes << 8) | b;
    while (bytes > 0) {
      const size_t chunk = std::min<uint64_t>(bytes, data.size());
      if (!write_all(fd, data.data(), chunk)) {
        close(fd);
        return;
      }
      bytes -= chunk;
    }
  }
}

int run_server(uint16_t port, double duration_s) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 1024) != 0)
    die("server: port " + std::to_string(port) + ": " + std::strerror(errno));
  std::fprintf(stderr, "sharebuf-tg: serving on port %u for %.0f s\n", port, duration_s);
  const uint64_t end = now_ns() + static_cast<uint64_t>(duration_s * 1e9);
  while (now_ns() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::thread(serve_connection, c).detach();
  }
  close(fd);
  return 0;
}

// Idle connections per server, shared by concurrent queries. A query that finds none opens a
// new one (and keeps it for later queries).
class ConnectionPool {
 public:
  ConnectionPool(const std::vector<Endpoint>& servers, int dscp)
      : servers_(servers), dscp_(dscp), idle_(servers.size()) {}
  ~ConnectionPool() {
    for (auto& fds : idle_)
      for (int fd : fds)
        close(fd);
  }
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  int open(size_t server, std::string& why) {
    const int fd = connect_to(servers_[server], dscp_, why);
    if (fd >= 0) opened_.fetch_add(1, std::memory_order_relaxed);
    return fd;
  }
  // An idle connection, else a new one (`opened` says which).
  int take(size_t server, std::string& why, bool& opened) {
    {
      std::lock_guard l(mu_);
      opened = false;
      if (!idle_[server].empty()) {
        const int fd = idle_[server].back();
        idle_[server].pop_back();
        return fd;
      }
    }
    opened = true;
    return open(server, why);
  }
  void put(size_t server, int fd) {
    std::lock_guard l(mu_);
    idle_[server].push_back(fd);
  }
  uint64_t opened() const { return opened_.load(std::memory_order_relaxed); }
  // Opens `per_server` idle connections to each server `wanted` says (all if empty), before a
  // run's clock starts; dies naming the first that fails. One thread per server: on a congested
  // path each handshake can wait out a full queue.
  void fill(uint64_t per_server, const std::vector<bool>& wanted = {}) {
    std::vector<std::string> errors(servers_.size());
    std::vector<std::thread> ts;
    for (size_t s = 0; s < servers_.size(); ++s) {
      if (!wanted.empty() && !wanted[s]) continue;
      ts.emplace_back([&, s] {
        for (uint64_t k = 0; k < per_server; ++k) {
          const int fd = open(s, errors[s]);
          if (fd < 0) return;
          put(s, fd);
        }
      });
    }
    for (auto& t : ts)
      t.join();
    for (const std::string& why : errors)
      if (!why.empty()) die(why);
  }

 private:
  const std::vector<Endpoint>& servers_;
  int dscp_;
  std::mutex mu_;
  std::vector<std::vector<int>> idle_;
  std::atomic<uint64_t> opened_{0};
};

// One response on a new connection, the handshake timed (connect_ns).
FlowRecord fetch_fresh(const Endpoint& e, uint64_t bytes, int dscp, uint64_t deadline_ns) {
  std::string why;
  const uint64_t c0 = now_ns();
  const int fd = connect_to(e, dscp, why);
  if (fd < 0) {
    FlowRecord r;
    r.why = why;
    r.server = e.text;
    r.bytes = bytes;
    return r;
  }
  FlowRecord r = exchange(fd, e, bytes, deadline_ns);
  r.connect_ns = r.start_ns - c0;
  close(fd);
  return r;
}

// One response on a pooled connection of `server` (a new one, timed, when none is idle).
FlowRecord fetch_pooled(ConnectionPool& pool, size_t server, const Endpoint& e, uint64_t bytes,
                        uint64_t deadline_ns) {
  std::string why;
  const uint64_t c0 = now_ns();
  bool opened = false;
  const int fd = pool.take(server, why, opened);
  if (fd < 0) {
    FlowRecord r;
    r.server = e.text;
    r.bytes = bytes;
    r.why = why;
    return r;
  }
  FlowRecord r = exchange(fd, e, bytes, deadline_ns);
  if (opened) r.connect_ns = r.start_ns - c0;
  if (r.ok)
    pool.put(server, fd);
  else
    close(fd);  // a half-read response would corrupt the next one
  return r;
}

struct Summary {
  static void print(const char* what, std::vector<double> v_ms) {
    if (v_ms.empty()) return;
    std::sort(v_ms.begin(), v_ms.end());
    // Nearest-rank quantile.
    auto q = [&](double p) {
      const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v_ms.size())));
      return v_ms[std::min(v_ms.size() - 1, rank == 0 ? 0 : rank - 1)];
    };
    double mean = 0;
    for (double x : v_ms)
      mean += x / static_cast<double>(v_ms.size());
    std::printf("%-6s n=%-6zu mean %.3f ms  p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n", what,
                v_ms.size(), mean, q(0.5), q(0.99), q(0.999), v_ms.back());
  }
};

constexpr const char* kUsage =
    "usage:\n"
    "  sharebuf-tg server [--port 5500] [--duration S]\n"
    "  sharebuf-tg fixed  --servers IP[:PORT],... --flows M --size BYTES\n"
    "  sharebuf-tg query  --servers IP[:PORT],... --size BYTES [--count N] [--rate Q] "
    "[--pool K]\n"
    "  sharebuf-tg websearch --servers IP[:PORT],... --load X --link-rate RATE [--cdf "
    "FILE]\n"
    "  sharebuf-tg schedule --file CSV [--pool K] [--start-at UNIX_S]\n"
    "  query: with --rate, open-loop Poisson arrivals (queries overlap), --pool K idle "
    "connections per server opened in advance (default 8)\n"
    "  schedule: the flows CSV lists (header start_ms,kind,query,server,bytes), each at its "
    "time from --start-at (CLOCK_REALTIME seconds; default now) on a new connection; rows "
    "with one query id >= 0 make a query (QCT from its start_ms); --pool K: query responses "
    "on K pooled connections per server instead (default 0); each flow gets --timeout, or "
    "with --duration S until S after the schedule's zero\n"
    "options: --duration S (default 10), --dscp N, --dscp-large N (websearch: DSCP of "
    "flows >= 100 KB; default --dscp), --csv FILE, --seed N, --timeout S (per flow, "
    "default 5)\n"
    "Responses carry the DSCP when the server's netns has net.ipv4.tcp_reflect_tos=1.\n"
    "Flow = a response of BYTES from a server; FCT from the request write to the last byte "
    "read; the CSV's connect_ms is the handshake before it (0 on a pooled connection).\n"
    "Exit status: 0, 1 if any flow failed (reason printed), 2 for bad arguments.\n";

// The command line.
struct Options {
  std::string mode;
  uint16_t port = 5500;
  double duration = 10;
  bool duration_set = false;
  std::vector<Endpoint> servers;
  uint64_t flows = 1, size = 0, count = 0, pool_size = 8;
  bool pool_set = false;
  std::string file;     // schedule
  double start_at = 0;  // schedule: CLOCK_REALTIME seconds of the schedule's zero (0: now)
  double rate = 0, load = 0, timeout = 5;
  uint64_t link_bps = 0;
  int dscp = -1;
  int large_dscp = -1;  // websearch: flows of 100 KB and more
  uint64_t seed = 1;
  std::string csv, cdf = sharebuf::common::data_file("websearch-flow-size-cdf.txt");
};

Options parse_options(int argc, char** argv) {
  Options o;
  o.mode = argv[1];
  std::string servers_text;
  std::optional<int> dscp_large;  // unset: same as dscp
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto v = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value", 2);
      return argv[++i];
    };
    try {
      if (a == "--port")
        o.port = static_cast<uint16_t>(std::stoi(v()));
      else if (a == "--duration") {
        o.duration = std::stod(v());
        o.duration_set = true;
      } else if (a == "--servers")
        servers_text = v();
      else if (a == "--flows")
        o.flows = std::stoull(v());
      else if (a == "--size")
        o.size = sharebuf::common::parse_size_cells(v(), 1);
      else if (a == "--count")
        o.count = std::stoull(v());
      else if (a == "--rate")
        o.rate = std::stod(v());
      else if (a == "--pool") {
        o.pool_size = std::stoull(v());
        o.pool_set = true;
      } else if (a == "--file")
        o.file = v();
      else if (a == "--start-at")
        o.start_at = std::stod(v());
      else if (a == "--load")
        o.load = std::stod(v());
      else if (a == "--link-rate")
        o.link_bps = sharebuf::common::parse_rate_bps(v());
      else if (a == "--dscp")
        o.dscp = std::stoi(v());
      else if (a == "--dscp-large")
        dscp_large = std::stoi(v());
      else if (a == "--csv")
        o.csv = v();
      else if (a == "--seed")
        o.seed = std::stoull(v());
      else if (a == "--timeout")
        o.timeout = std::stod(v());
      else if (a == "--cdf")
        o.cdf = v();
      else
        die("unknown option " + a + " (see --help)", 2);
    } catch (const std::exception& e) {
      die(a + ": " + e.what(), 2);
    }
  }
  if (o.mode == "server") return o;
  if (o.mode == "schedule") {
    if (o.file.empty()) die("schedule needs --file", 2);
    if (!o.pool_set) o.pool_size = 0;
    return o;
  }
  if (o.mode != "fixed" && o.mode != "query" && o.mode != "websearch")
    die("unknown mode '" + o.mode + "'", 2);
  for (size_t s = 0, e; s < servers_text.size(); s = e + 1) {
    e = servers_text.find(',', s);
    if (e == std::string::npos) e = servers_text.size();
    o.servers.push_back(parse_endpoint(servers_text.substr(s, e - s), o.port));
  }
  if (o.servers.empty()) die("--servers is required", 2);
  if (o.dscp > 63) die("--dscp must be 0..63", 2);
  if (dscp_large && (*dscp_large < 0 || *dscp_large > 63)) die("--dscp-large must be 0..63", 2);
  o.large_dscp = dscp_large.value_or(o.dscp);
  return o;
}

// What a run collects, from every flow's thread.
struct Run {
  uint64_t start = 0;
  uint64_t end = 0;  // no new flow or query after this
  uint64_t timeout_ns = 0;
  std::mutex mu;
  std::vector<FlowRecord> records;
  std::vector<std::pair<int64_t, uint64_t>> queries;  // (id, qct)
  uint64_t extra_connections = 0;  // query mode: connections opened during the run

  explicit Run(const Options& o)
      : start(now_ns()),
        end(start + static_cast<uint64_t>(o.duration * 1e9)),
        timeout_ns(static_cast<uint64_t>(o.timeout * 1e9)) {}
  void restart(const Options& o) {
    start = now_ns();
    end = start + static_cast<uint64_t>(o.duration * 1e9);
  }
  void record(FlowRecord r) {
    std::lock_guard l(mu);
    r.id = records.size();
    records.push_back(std::move(r));
  }
};

// --flows responses of --size, all at once, from the servers in turn.
void run_fixed(const Options& o, Run& run) {
  if (o.size == 0) die("--size is required", 2);
  std::vector<std::thread> ts;
  for (uint64_t f = 0; f < o.flows; ++f) {
    ts.emplace_back([&, f] {
      const Endpoint& e = o.servers[f % o.servers.size()];
      FlowRecord r = fetch_fresh(e, o.size, o.dscp, now_ns() + run.timeout_ns);
      r.kind = "fixed";
      run.record(r);
    });
  }
  for (auto& t : ts)
    t.join();
}

// Queries of --size split over the servers: one after another (--count), or open loop (--rate).
void run_queries(const Options& o, Run& run) {
  if (o.size == 0) die("--size is required", 2);
  const uint64_t count = o.count == 0 && o.rate <= 0 ? 1 : o.count;
  if (o.pool_size == 0) die("--pool must be at least 1", 2);
  ConnectionPool pool(o.servers, o.dscp);
  // Connect before the clock starts: an unreachable server fails the run at once, and the
  // first queries do not pay a handshake.
  const uint64_t per_server = o.rate > 0 ? o.pool_size : 1;
  pool.fill(per_server);
  run.restart(o);
  const uint64_t per = std::max<uint64_t>(1, o.size / o.servers.size());
  std::atomic<bool> failed{false};
  // One query: every server's response on a connection of its own, in parallel; the QCT runs
  // from `q0` to the last response.
  auto run_query = [&](int64_t q, uint64_t q0) {
    std::vector<FlowRecord> rs(o.servers.size());
    std::vector<std::thread> ts;
    for (size_t s = 0; s < o.servers.size(); ++s) {
      ts.emplace_back(
          [&, s] { rs[s] = fetch_pooled(pool, s, o.servers[s], per, now_ns() + run.timeout_ns); });
    }
    for (auto& t : ts)
      t.join();
    const uint64_t qct = now_ns() - q0;
    bool all_ok = true;
    for (auto& r : rs) {
      r.kind = "query";
      r.query = q;
      all_ok = all_ok && r.ok;
      run.record(r);
    }
    if (!all_ok) {
      failed = true;
      return;
    }
    std::lock_guard l(run.mu);
    run.queries.emplace_back(q, qct);
  };
  if (o.rate > 0) {
    // Open loop, as the papers' query traffic: queries arrive at Poisson times whether or not
    // earlier ones have finished, so a slow query does not delay or thin out the next ones.
    std::mt19937_64 rng(o.seed);
    std::exponential_distribution<double> gap(o.rate);
    std::vector<std::thread> inflight;
    uint64_t next = now_ns();
    for (int64_t q = 0; count == 0 || static_cast<uint64_t>(q) < count; ++q) {
      next += static_cast<uint64_t>(gap(rng) * 1e9);
      if (next >= run.end || failed) break;
      while (now_ns() < next)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      inflight.emplace_back(run_query, q, next);
    }
    for (auto& t : inflight)
      t.join();
  } else {
    // --count without --rate: one query after another, each as soon as the last is done.
    for (int64_t q = 0; static_cast<uint64_t>(q) < count && now_ns() < run.end && !failed; ++q)
      run_query(q, now_ns());
  }
  run.extra_connections = pool.opened() - o.servers.size() * per_server;
}

// Poisson flow arrivals at --load of --link-rate, sizes from the web-search CDF.
void run_websearch(const Options& o, Run& run) {
  if (o.load <= 0 || o.link_bps == 0) die("websearch needs --load and --link-rate", 2);
  sharebuf::common::FlowSizeCdf sizes;
  try {
    sizes = sharebuf::common::FlowSizeCdf::load(o.cdf);
  } catch (const std::exception& e) {
    die(e.what(), 2);
  }
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u(0, 1);
  double mean = 0;
  for (int i = 0; i < 20000; ++i)
    mean += static_cast<double>(sizes.quantile(u(rng))) / 20000;
  const double flows_per_s = o.load * static_cast<double>(o.link_bps) / (mean * 8);
  std::exponential_distribution<double> gap(flows_per_s);
  std::vector<std::thread> ts;
  uint64_t next = now_ns();
  for (;;) {
    next += static_cast<uint64_t>(gap(rng) * 1e9);
    if (next >= run.end) break;
    while (now_ns() < next)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    const Endpoint& e = o.servers[rng() % o.servers.size()];
    const uint64_t bytes = sizes.quantile(u(rng));
    ts.emplace_back([&, bytes, &e = e] {
      FlowRecord r =
          fetch_fresh(e, bytes, bytes < 100'000 ? o.dscp : o.large_dscp, run.end + run.timeout_ns);
      r.kind = bytes < 100'000 ? "short" : bytes >= 1'000'000 ? "long" : "medium";
      run.record(r);
    });
  }
  for (auto& t : ts)
    t.join();
}

// A schedule's flow: at start_ns after the schedule's zero, `bytes` from `server`.
struct Scheduled {
  uint64_t start_ns = 0;
  std::string kind;
  int64_t query = -1;
  size_t server = 0;  // index into the schedule's servers
  uint64_t bytes = 0;
};

// Reads start_ms,kind,query,server,bytes rows; errors name the file and line.
std::vector<Scheduled> read_schedule(const std::string& path, std::vector<Endpoint>& servers,
                                     uint16_t default_port) {
  std::ifstream in(path);
  if (!in) die("cannot read " + path + ": " + std::strerror(errno), 2);
  const std::string header = "start_ms,kind,query,server,bytes";
  std::string line;
  if (!std::getline(in, line) || line != header)
    die(path + ":1: the header must be '" + header + "'", 2);
  std::vector<Scheduled> flows;
  for (size_t n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    for (size_t s = 0, e;; s = e + 1) {
      e = line.find(',', s);
      f.push_back(line.substr(s, e == std::string::npos ? std::string::npos : e - s));
      if (e == std::string::npos) break;
    }
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (f.size() != 5) die(where + "expected 5 fields, found " + std::to_string(f.size()), 2);
    Scheduled x;
    try {
      const double ms = std::stod(f[0]);
      if (!(ms >= 0)) throw std::invalid_argument("negative");
      x.start_ns = static_cast<uint64_t>(ms * 1e6);
      x.query = std::stoll(f[2]);
      x.bytes = std::stoull(f[4]);
    } catch (const std::exception&) {
      die(where + "start_ms, query and bytes must be numbers (start_ms >= 0)", 2);
    }
    if (x.bytes == 0) die(where + "bytes must be at least 1", 2);
    x.kind = f[1];
    const Endpoint e = parse_endpoint(f[3], default_port);
    auto it = std::find_if(servers.begin(), servers.end(),
                           [&](const Endpoint& s) { return s.text == e.text; });
    x.server = static_cast<size_t>(it - servers.begin());
    if (it == servers.end()) servers.push_back(e);
    flows.push_back(x);
  }
  std::stable_sort(flows.begin(), flows.end(),
                   [](const Scheduled& a, const Scheduled& b) { return a.start_ns < b.start_ns; });
  return flows;
}

// Runs a schedule's flows at their times (each flow or query in a thread of its own, so a slow
// one delays nothing else); a query's QCT runs from its start to its last response.
void run_schedule(const Options& o, Run& run) {
  std::vector<Endpoint> servers;
  const std::vector<Scheduled> flows = read_schedule(o.file, servers, o.port);
  std::map<int64_t, std::vector<size_t>> queries;
  for (size_t i = 0; i < flows.size(); ++i)
    if (flows[i].query >= 0) queries[flows[i].query].push_back(i);
  for (const auto& [q, members] : queries)
    for (size_t i : members)
      if (flows[i].start_ns != flows[members.front()].start_ns)
        die(o.file + ": the responses of query " + std::to_string(q) + " start at different times",
            2);
  ConnectionPool pool(servers, o.dscp);
  if (o.pool_size > 0) {  // query responses' connections, opened before the clock starts
    std::vector<bool> used(servers.size());
    for (const auto& [q, members] : queries)
      for (size_t i : members)
        used[flows[i].server] = true;
    pool.fill(o.pool_size, used);
  }
  if (o.start_at > 0) {
    const auto zero = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(o.start_at)));
    if (std::chrono::system_clock::now() > zero + std::chrono::seconds(1))
      std::fprintf(stderr, "sharebuf-tg: --start-at is %.1f s in the past; starting now\n",
                   std::chrono::duration<double>(std::chrono::system_clock::now() - zero).count());
    std::this_thread::sleep_until(zero);
  }
  run.start = now_ns();
  run.end = run.start + (flows.empty() ? 0 : flows.back().start_ns);
  auto one = [&](size_t i, uint64_t deadline) {
    const Scheduled& x = flows[i];
    FlowRecord r = x.query >= 0 && o.pool_size > 0
                       ? fetch_pooled(pool, x.server, servers[x.server], x.bytes, deadline)
                       : fetch_fresh(servers[x.server], x.bytes, o.dscp, deadline);
    r.kind = x.kind;
    r.query = x.query;
    return r;
  };
  std::vector<std::thread> ts;
  std::vector<bool> started(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    if (started[i]) continue;
    const uint64_t at = run.start + flows[i].start_ns;
    while (now_ns() < at)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    // As a simulation ends every flow at its end: with --duration, every flow has until then.
    const uint64_t deadline =
        o.duration_set ? run.start + static_cast<uint64_t>(o.duration * 1e9) : at + run.timeout_ns;
    if (flows[i].query < 0) {
      started[i] = true;
      ts.emplace_back([&, i, deadline] { run.record(one(i, deadline)); });
      continue;
    }
    const std::vector<size_t>& members = queries[flows[i].query];
    for (size_t m : members)
      started[m] = true;
    ts.emplace_back([&, members, at, deadline, q = flows[i].query] {
      std::vector<FlowRecord> rs(members.size());
      std::vector<std::thread> parts;
      for (size_t k = 0; k < members.size(); ++k)
        parts.emplace_back([&, k] { rs[k] = one(members[k], deadline); });
      for (auto& t : parts)
        t.join();
      const uint64_t qct = now_ns() - at;
      bool all_ok = true;
      for (auto& r : rs) {
        all_ok = all_ok && r.ok;
        run.record(r);
      }
      std::lock_guard l(run.mu);
      if (all_ok) run.queries.emplace_back(q, qct);
    });
  }
  for (auto& t : ts)
    t.join();
}

void write_csv(const std::string& csv, const Run& run) {
  std::ofstream out(csv);
  if (!out) die("cannot write " + csv);
  out << "id,kind,query,server,bytes,start_ms,fct_ms,ok,connect_ms\n";
  for (const auto& r : run.records)
    out << r.id << ',' << r.kind << ',' << r.query << ',' << r.server << ',' << r.bytes << ','
        << static_cast<double>(r.start_ns - run.start) / 1e6 << ','
        << static_cast<double>(r.fct_ns) / 1e6 << ',' << (r.ok ? 1 : 0) << ','
        << static_cast<double>(r.connect_ns) / 1e6 << '\n';
  if (!run.queries.empty()) {
    std::ofstream qo(csv + ".queries.csv");
    qo << "query,qct_ms\n";
    for (const auto& [id, qct] : run.queries)
      qo << id << ',' << static_cast<double>(qct) / 1e6 << '\n';
  }
}

// The summaries; 1 if any flow failed.
int report(const Run& run) {
  std::vector<double> fct;
  size_t failed = 0;
  for (const auto& r : run.records) {
    if (r.ok)
      fct.push_back(static_cast<double>(r.fct_ns) / 1e6);
    else if (++failed <= 5)
      std::fprintf(stderr, "sharebuf-tg: flow %lu failed: %s\n", r.id, r.why.c_str());
  }
  Summary::print("fct", fct);
  std::vector<double> qct;
  for (const auto& [id, t] : run.queries)
    qct.push_back(static_cast<double>(t) / 1e6);
  Summary::print("qct", qct);
  if (run.extra_connections > 0)
    std::printf(
        "queries found no idle connection %lu times and opened one (handshake in the QCT; "
        "--pool raises the number opened in advance)\n",
        static_cast<unsigned long>(run.extra_connections));
  if (failed > 0) {
    std::fprintf(stderr, "sharebuf-tg: %zu of %zu flows failed\n", failed, run.records.size());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const Options o = parse_options(argc, argv);
  if (o.mode == "server") return run_server(o.port, o.duration);
  Run run(o);
  if (o.mode == "fixed") {
    run_fixed(o, run);
  } else if (o.mode == "query") {
    run_queries(o, run);
  } else if (o.mode == "schedule") {
    run_schedule(o, run);
  } else {
    run_websearch(o, run);
  }
  if (!o.csv.empty()) write_csv(o.csv, run);
  return report(run);
}

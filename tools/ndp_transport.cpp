// sharebuf-ndp: a trim-aware transport over UDP, NDP-like (trimming paper, section 2):
// the receiver answers every data packet at once, with an ACK when it arrived whole and a NACK
// when only its trimmed header did. Receiver-driven as NDP: a sender sends its first window at
// once, then one packet per PULL (a NACKed packet first, else a new one); every arrival, whole or
// trimmed, earns its sender a pull, and the receiver paces pulls at its link rate (--pull-rate),
// so after the first window the senders together send no faster than the receiver's port
// drains. Lost packets (a switch that drops instead of trimming) are retransmitted after a
// timeout, as a datacenter TCP would after its minimum RTO, the timer doubling with each resend of
// a packet; so are requests, and pulls (a started
// flow that hears nothing for a timeout while no pull is queued is pulled again). A header a switch
// returned to its sender (its header queue full) is resent on the next pull. It measures what
// E7 reports: per-flow completion times, the delay of every retransmission, and the one-way latency
// of every trimmed header.
//
//   sharebuf-ndp serve [--port 9100] [--dscp N] [--rto 10ms] [--duration S]
//   sharebuf-ndp query --servers IP[:PORT],... --flows N --size BYTES [--count Q] [--gap 20ms]
//       [--rto 10ms: a request not answered is sent again after this]
//       [--window W] [--pull-rate RATE] [--timeout 2s] [--csv FILE] [--events FILE] [--seed N]
//
// `query` is the receiver: each query asks the servers (round robin) for N flows of BYTES each at
// once — an incast into the receiver's port — and waits until every flow is complete or the
// timeout passes (the flow then counts as failed and the run exits non-zero). A server (`serve`)
// sends each flow in packets of kPayload bytes, its first `window` at once (the receiver gives it
// in the request), each packet stamped with its send time and its first transmission's.
// Clocks: CLOCK_MONOTONIC, one clock for every network namespace of the host, so one-way
// latencies are differences of stamps taken in two processes.
//
// Output: --csv (one row per flow: query, flow, server, bytes, packets, fct_ns, trimmed headers,
// retransmissions after a NACK, after a timeout, duplicates, failed) and --events (one row per
// trimmed header: its one-way latency; one row per whole packet that arrived on its first
// transmission: its one-way latency; one row per retransmission that arrived: its delay from the
// first transmission of that packet).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/units.h"

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

constexpr uint32_t kMagic = 0x4e445031;  // "NDP1"
enum Type : uint8_t { kRequest = 1, kData = 2, kAck = 3, kNack = 4, kPull = 5 };

// Every datagram starts with this; a trimmed data packet keeps it (it ends 42 + 48 = 90 bytes into
// the frame, inside the 128 bytes a default trim keeps).
struct Header {
  uint32_t magic;
  uint8_t type;
  uint8_t xmit;    // data: 1 for the first transmission, 2+ for retransmissions
  uint8_t nacked;  // data: this retransmission answers a NACK (else a timeout)
  uint8_t reserved;
  uint32_t flow;
  uint32_t seq;      // data/ack/nack: packet number; request: packets in the flow
  uint32_t count;    // data: packets in the flow; request: window
  uint32_t payload;  // data: payload bytes after the header in the whole packet
  uint64_t sent_ns;
  uint64_t first_sent_ns;
  uint64_t spare;
};
static_assert(sizeof(Header) == 48);
constexpr uint32_t kPayload = 1400;  // UDP payload of a whole data packet, header included

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "sharebuf-ndp: %s\n", msg.c_str());
  std::exit(2);
}

int open_socket(uint16_t port, int dscp) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die(std::string("socket: ") + std::strerror(errno));
  const int big = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  if (dscp >= 0) {
    const int tos = dscp << 2;
    setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    die("bind port " + std::to_string(port) + ": " + std::strerror(errno));
  return fd;
}

void send_to(int fd, const sockaddr_in& to, const void* buf, size_t len) {
  // A full socket buffer is a local drop: the timeout recovers it like a network loss.
  sendto(fd, buf, len, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to), sizeof to);
}

// One datagram, without waiting: false when none is there. `n` is its length, 0 for one that is
// not ours (shorter than a header, or another magic).
bool receive(int fd, std::vector<uint8_t>& buf, sockaddr_in& from, Header& h, size_t& n) {
  socklen_t fl = sizeof from;
  const ssize_t got =
      recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &fl);
  if (got < 0) return false;
  n = 0;
  if (got < static_cast<ssize_t>(sizeof(Header))) return true;
  std::memcpy(&h, buf.data(), sizeof h);
  if (h.magic == kMagic) n = static_cast<size_t>(got);
  return true;
}

uint64_t key_of(const sockaddr_in& a, uint32_t flow) {
  return (static_cast<uint64_t>(a.sin_addr.s_addr) << 32) ^
         (static_cast<uint64_t>(a.sin_port) << 48) ^ flow;
}

// ---- serve: the senders ----

struct SendFlow {
  sockaddr_in peer{};
  uint32_t flow = 0, packets = 0, window = 0, next = 0, acked = 0;
  std::vector<uint8_t> done;    // per packet: acknowledged
  std::vector<uint64_t> last;   // per packet: last transmission (0: not in flight)
  std::vector<uint64_t> first;  // per packet: first transmission
  std::vector<uint8_t> xmits;
  std::vector<uint32_t> nacked;  // packets whose header came back: resent on the next pulls
  uint64_t heard_ns = 0;         // the receiver's last ACK or NACK (or the request)
};
// A flow the receiver stopped answering (it gave up on its query) is forgotten after this long.
constexpr uint64_t kAbandonNs = 2'000'000'000;

void transmit(int fd, SendFlow& f, uint32_t seq, bool nacked, uint64_t now) {
  static std::vector<uint8_t> buf(kPayload, 0);
  Header h{};
  h.magic = kMagic;
  h.type = kData;
  h.xmit = static_cast<uint8_t>(std::min<int>(255, ++f.xmits[seq]));
  h.nacked = nacked ? 1 : 0;
  h.flow = f.flow;
  h.seq = seq;
  h.count = f.packets;
  h.payload = kPayload;
  h.sent_ns = now;
  if (f.first[seq] == 0) f.first[seq] = now;
  h.first_sent_ns = f.first[seq];
  std::memcpy(buf.data(), &h, sizeof h);
  send_to(fd, f.peer, buf.data(), buf.size());
  f.last[seq] = now;
}

// The first window goes out at once (NDP's first RTT at line rate); after it, one packet per pull.
void send_first_window(int fd, SendFlow& f, uint64_t now) {
  while (f.next < f.window && f.next < f.packets)
    transmit(fd, f, f.next++, false, now);
}

// A pull: a NACKed packet first, else the next new one.
void on_pull(int fd, SendFlow& f, uint64_t now) {
  while (!f.nacked.empty()) {
    const uint32_t seq = f.nacked.front();
    f.nacked.erase(f.nacked.begin());
    if (f.done[seq]) continue;
    transmit(fd, f, seq, true, now);
    return;
  }
  if (f.next < f.packets) transmit(fd, f, f.next++, false, now);
}

int serve(uint16_t port, int dscp, uint64_t rto_ns, double duration_s) {
  const int fd = open_socket(port, dscp);
  std::map<uint64_t, SendFlow> flows;
  const uint64_t end = duration_s > 0 ? now_ns() + static_cast<uint64_t>(duration_s * 1e9) : 0;
  std::vector<uint8_t> buf(65536);
  uint64_t last_scan = now_ns();
  while (end == 0 || now_ns() < end) {
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 1);
    sockaddr_in from{};
    Header h;
    size_t n = 0;
    while (receive(fd, buf, from, h, n)) {
      if (n == 0) continue;
      const uint64_t now = now_ns();
      const uint64_t key = key_of(from, h.flow);
      if (h.type == kRequest) {
        if (flows.count(key) != 0 || h.seq == 0) continue;  // a repeated request
        SendFlow& f = flows[key];
        f.peer = from;
        f.flow = h.flow;
        f.packets = h.seq;
        f.window = std::max<uint32_t>(1, h.count);
        f.done.assign(f.packets, 0);
        f.last.assign(f.packets, 0);
        f.first.assign(f.packets, 0);
        f.xmits.assign(f.packets, 0);
        f.heard_ns = now;
        send_first_window(fd, f, now);
        continue;
      }
      auto it = flows.find(key);
      if (it == flows.end() || h.seq >= it->second.packets) continue;
      SendFlow& f = it->second;
      f.heard_ns = now;
      if (h.type == kPull) {
        on_pull(fd, f, now);
        continue;
      }
      if (f.done[h.seq]) continue;
      if (h.type == kAck) {
        f.done[h.seq] = 1;
        f.last[h.seq] = 0;
        if (++f.acked == f.packets) flows.erase(it);
      } else if (h.type == kNack) {
        // The header arrived, the payload did not: resent on a pull (NDP), so retransmissions
        // come at the receiver's pace instead of flooding the port with headers.
        f.last[h.seq] = 0;
        f.nacked.push_back(h.seq);
      } else if (h.type == kData) {
        // Our own packet, its header returned by a switch whose header queue was full (NDP's
        // return-to-sender): resent on the next pull. Its timer stays armed, since a packet
        // that never reached the receiver earns no pull of its own.
        f.nacked.push_back(h.seq);
      }
    }
    const uint64_t now = now_ns();
    if (now - last_scan >= 500'000) {
      last_scan = now;
      for (auto it = flows.begin(); it != flows.end();) {
        SendFlow& f = it->second;
        if (now - f.heard_ns > kAbandonNs) {
          it = flows.erase(it);
          continue;
        }
        // The timer doubles with each resend of a packet (at most 64 times --rto), as a TCP's
        // does: a fixed timer shorter than the path's delay resends every packet in flight each
        // --rto, and the resends lengthen the delay further (a sanitizer-slowed switch turned
        // 752 packets into 50 000 trimmed headers that way).
        for (uint32_t s = 0; s < f.next; ++s) {
          const uint64_t timer = rto_ns << std::min<int>(6, std::max<int>(0, f.xmits[s] - 1));
          if (!f.done[s] && f.last[s] != 0 && now - f.last[s] >= timer)
            transmit(fd, f, s, false, now);
        }
        ++it;
      }
    }
  }
  close(fd);
  return 0;
}

// ---- query: the receiver ----

struct RecvFlow {
  uint32_t query = 0, flow = 0, server = 0, packets = 0, got = 0;
  uint64_t start = 0, fct = 0;
  uint32_t trimmed = 0, nack_retx = 0, rto_retx = 0, dups = 0;
  uint64_t heard_ns = 0;  // its last arrival, whole or trimmed
  uint32_t queued_pulls = 0;
  std::vector<uint8_t> have;
};

struct Options {
  std::vector<sockaddr_in> servers;
  uint32_t flows = 8, count = 10, window = 8;
  uint64_t size = 65536, gap_ns = 20'000'000, timeout_ns = 2'000'000'000;
  uint64_t pull_rate_bps = 0;    // pulls paced so whole packets arrive at this rate; 0: at once
  uint64_t rto_ns = 10'000'000;  // a request with no answer is sent again after this
  std::string csv, events;
  uint32_t seed = 1;
};

int query(const Options& o) {
  const int fd = open_socket(0, -1);
  std::FILE* csv = o.csv.empty() ? stdout : std::fopen(o.csv.c_str(), "w");
  if (csv == nullptr) die("cannot write " + o.csv);
  std::FILE* ev = o.events.empty() ? nullptr : std::fopen(o.events.c_str(), "w");
  if (!o.events.empty() && ev == nullptr) die("cannot write " + o.events);
  std::fprintf(csv,
               "query,flow,server,bytes,packets,fct_ns,trimmed,nack_retx,rto_retx,duplicates,"
               "failed\n");
  if (ev) std::fprintf(ev, "query,flow,seq,kind,ns\n");
  const uint32_t packets = static_cast<uint32_t>((o.size + kPayload - 1) / kPayload);
  std::vector<uint8_t> buf(65536);
  std::mt19937 rng(o.seed);
  int failed = 0;
  uint64_t requests_resent = 0, pulls_resent = 0;
  auto send_request = [&](const RecvFlow& f) {
    Header h{};
    h.magic = kMagic;
    h.type = kRequest;
    h.flow = f.flow;
    h.seq = f.packets;
    h.count = o.window;
    send_to(fd, o.servers[f.server], &h, sizeof h);
  };
  for (uint32_t q = 0; q < o.count; ++q) {
    std::vector<RecvFlow> flows(o.flows);
    uint64_t last_request_scan = now_ns();
    const uint64_t start = now_ns();
    for (uint32_t i = 0; i < o.flows; ++i) {
      RecvFlow& f = flows[i];
      f.query = q;
      f.flow = q * 65536 + i;
      f.server = i % static_cast<uint32_t>(o.servers.size());
      f.packets = packets;
      f.have.assign(packets, 0);
      f.start = start;
      send_request(f);
    }
    uint32_t open = o.flows;
    // NDP's pull queue: every arrival (whole or trimmed) earns its sender a pull, and pulls leave
    // one packet-time apart at the receiver's link rate.
    std::vector<uint32_t> pulls;
    size_t pull_head = 0;
    const uint64_t pull_gap =
        o.pull_rate_bps == 0 ? 0 : (uint64_t{kPayload} + 42) * 8'000'000'000ull / o.pull_rate_bps;
    uint64_t next_pull = 0;
    while (open > 0 && now_ns() - start < o.timeout_ns) {
      pollfd p{fd, POLLIN, 0};
      const bool pulls_waiting = pull_head < pulls.size();
      poll(&p, 1, pulls_waiting ? 0 : 10);
      sockaddr_in from{};
      Header h;
      size_t n = 0;
      while (receive(fd, buf, from, h, n)) {
        if (n == 0 || h.type != kData) continue;
        if (h.flow / 65536 < q) {
          // A packet of a query given up on: acknowledged, so that its sender stops resending it.
          Header r{};
          r.magic = kMagic;
          r.type = kAck;
          r.flow = h.flow;
          r.seq = h.seq;
          r.sent_ns = now_ns();
          send_to(fd, from, &r, sizeof r);
          continue;
        }
        if (h.flow / 65536 != q) continue;
        const uint32_t i = h.flow % 65536;
        if (i >= o.flows || h.seq >= flows[i].packets) continue;
        RecvFlow& f = flows[i];
        const uint64_t now = now_ns();
        const bool whole = static_cast<uint32_t>(n) >= h.payload;
        Header r{};
        r.magic = kMagic;
        r.flow = h.flow;
        r.seq = h.seq;
        r.sent_ns = now;
        f.heard_ns = now;
        if (f.got < f.packets) {
          pulls.push_back(i);
          ++f.queued_pulls;
        }
        if (!whole) {
          // A trimmed header: ask for the packet again (NACK now, resent on a pull).
          ++f.trimmed;
          if (ev)
            std::fprintf(ev, "%u,%u,%u,header,%llu\n", q, i, h.seq,
                         static_cast<unsigned long long>(now - h.sent_ns));
          r.type = f.have[h.seq] ? kAck : kNack;
          send_to(fd, from, &r, sizeof r);
          continue;
        }
        r.type = kAck;
        send_to(fd, from, &r, sizeof r);
        if (f.have[h.seq]) {
          ++f.dups;
          continue;
        }
        f.have[h.seq] = 1;
        if (h.xmit > 1) {
          ++(h.nacked ? f.nack_retx : f.rto_retx);
          if (ev)
            std::fprintf(ev, "%u,%u,%u,%s,%llu\n", q, i, h.seq, h.nacked ? "nack_retx" : "rto_retx",
                         static_cast<unsigned long long>(now - h.first_sent_ns));
        } else if (ev) {
          // A whole packet on its first transmission: its one-way latency (queueing included),
          // what trimmed headers are compared with.
          std::fprintf(ev, "%u,%u,%u,data,%llu\n", q, i, h.seq,
                       static_cast<unsigned long long>(now - h.sent_ns));
        }
        if (++f.got == f.packets) {
          f.fct = now - f.start;
          --open;
        }
      }
      const uint64_t now = now_ns();
      // A request can be lost too (a full buffer refuses it on the way to the sender): asked
      // again every timeout until the flow's first packet or header arrives.
      if (now - last_request_scan >= o.rto_ns) {
        last_request_scan = now;
        for (RecvFlow& f : flows) {
          if (f.got == 0 && f.trimmed == 0 && now - f.start >= o.rto_ns) {
            send_request(f);
            ++requests_resent;
          } else if (f.got < f.packets && f.heard_ns != 0 && now - f.heard_ns >= o.rto_ns &&
                     f.queued_pulls == 0) {
            // Nothing from a started flow for a timeout and no pull queued: a pull (or the
            // packets it asked for) was lost; pull again, as NDP's receiver does.
            pulls.push_back(static_cast<uint32_t>(&f - flows.data()));
            ++f.queued_pulls;
            ++pulls_resent;
          }
        }
      }
      while (pull_head < pulls.size() && now >= next_pull) {
        RecvFlow& f = flows[pulls[pull_head++]];
        --f.queued_pulls;
        if (f.got == f.packets) continue;
        Header r{};
        r.magic = kMagic;
        r.type = kPull;
        r.flow = f.flow;
        send_to(fd, o.servers[f.server], &r, sizeof r);
        next_pull = std::max(next_pull, now - std::min(now, pull_gap)) + pull_gap;
      }
    }
    for (const RecvFlow& f : flows) {
      const bool fail = f.got < f.packets;
      failed += fail ? 1 : 0;
      std::fprintf(csv, "%u,%u,%u,%llu,%u,%llu,%u,%u,%u,%u,%d\n", f.query, f.flow % 65536, f.server,
                   static_cast<unsigned long long>(o.size), f.packets,
                   static_cast<unsigned long long>(fail ? 0 : f.fct), f.trimmed, f.nack_retx,
                   f.rto_retx, f.dups, fail ? 1 : 0);
    }
    std::fflush(csv);
    if (open > 0)
      std::fprintf(stderr, "sharebuf-ndp: query %u: %u of %u flows incomplete after the timeout\n",
                   q, open, o.flows);
    // The next query after the gap, jittered +-25 % so queries do not lock to a period.
    std::uniform_real_distribution<double> jitter(0.75, 1.25);
    const uint64_t until =
        now_ns() + static_cast<uint64_t>(static_cast<double>(o.gap_ns) * jitter(rng));
    while (now_ns() < until) {
      pollfd p{fd, POLLIN, 0};
      poll(&p, 1, 1);
      while (recv(fd, buf.data(), buf.size(), MSG_DONTWAIT) > 0) {
      }
    }
  }
  if (csv != stdout) std::fclose(csv);
  if (ev) std::fclose(ev);
  close(fd);
  if (requests_resent > 0 || pulls_resent > 0)
    std::fprintf(stderr,
                 "sharebuf-ndp: %llu request(s) and %llu pull(s) sent again (no answer within "
                 "--rto)\n",
                 static_cast<unsigned long long>(requests_resent),
                 static_cast<unsigned long long>(pulls_resent));
  if (failed > 0) {
    std::fprintf(stderr, "sharebuf-ndp: %d flow(s) failed\n", failed);
    return 1;
  }
  return 0;
}

sockaddr_in parse_server(const std::string& s, uint16_t default_port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const auto colon = s.find(':');
  const std::string ip = s.substr(0, colon);
  if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1)
    die("--servers: '" + s + "' is not IPv4[:PORT]");
  int port = default_port;
  if (colon != std::string::npos) {
    port = std::atoi(s.c_str() + colon + 1);
    if (port <= 0 || port > 65535) die("--servers: bad port in '" + s + "'");
  }
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

void usage(std::FILE* to) {
  std::fputs(
      "usage: sharebuf-ndp serve [--port 9100] [--dscp N] [--rto 10ms] [--duration S]\n"
      "       sharebuf-ndp query --servers IP[:PORT],... --flows N --size BYTES [--count 10]\n"
      "           [--rto 10ms]\n"
      "           [--gap 20ms] [--window 8] [--pull-rate RATE] [--timeout 2s] [--csv FILE]\n"
      "           [--events FILE] [--seed N]\n"
      "A trim-aware UDP transport: the receiver NACKs a trimmed header at once, the sender\n"
      "retransmits; lost packets come back after --rto, doubled with each resend. See the\n"
      "comment at the top of tools/ndp_transport.cpp and docs/trimming.md.\n",
      to);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string mode = argv[1];
  if (mode != "serve" && mode != "query") {
    usage(stderr);
    return 2;
  }
  uint16_t port = 9100;
  int dscp = -1;
  uint64_t rto = 10'000'000;
  double duration = 0;
  Options o;
  std::string servers;
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) die("option " + a + " needs a value");
        return argv[++i];
      };
      auto number = [&](uint64_t lo, uint64_t hi) {
        const std::string v = value();
        char* end = nullptr;
        const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < lo || n > hi)
          die(a + ": '" + v + "' must be a whole number from " + std::to_string(lo) + " to " +
              std::to_string(hi));
        return static_cast<uint64_t>(n);
      };
      if (a == "--port")
        port = static_cast<uint16_t>(number(1, 65535));
      else if (a == "--dscp")
        dscp = static_cast<int>(number(0, 63));
      else if (a == "--rto")
        rto = sharebuf::common::parse_duration_ns(value());
      else if (a == "--duration")
        duration = static_cast<double>(number(1, 86400));
      else if (a == "--servers")
        servers = value();
      else if (a == "--flows")
        o.flows = static_cast<uint32_t>(number(1, 4096));
      else if (a == "--size")
        o.size = number(1, 1ull << 30);
      else if (a == "--count")
        o.count = static_cast<uint32_t>(number(1, 1'000'000));
      else if (a == "--gap")
        o.gap_ns = sharebuf::common::parse_duration_ns(value());
      else if (a == "--pull-rate")
        o.pull_rate_bps = sharebuf::common::parse_rate_bps(value());
      else if (a == "--window")
        o.window = static_cast<uint32_t>(number(1, 4096));
      else if (a == "--timeout")
        o.timeout_ns = sharebuf::common::parse_duration_ns(value());
      else if (a == "--csv")
        o.csv = value();
      else if (a == "--events")
        o.events = value();
      else if (a == "--seed")
        o.seed = static_cast<uint32_t>(number(0, 0xffffffffu));
      else if (a == "--help" || a == "-h") {
        usage(stdout);
        return 0;
      } else {
        die("unknown option '" + a + "' (--help)");
      }
    }
  } catch (const std::exception& e) {
    die(e.what());
  }
  o.rto_ns = rto;
  if (mode == "serve") return serve(port, dscp, rto, duration);
  if (servers.empty()) die("query needs --servers");
  for (size_t b = 0; b <= servers.size();) {
    const size_t e = std::min(servers.find(',', b), servers.size());
    if (e > b) o.servers.push_back(parse_server(servers.substr(b, e - b), port));
    b = e + 1;
  }
  return query(o);
}

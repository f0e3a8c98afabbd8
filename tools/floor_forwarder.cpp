// sharebuf-floor: the least a user-space switch on AF_PACKET does, as a floor to measure
// sharebufd against (bench/lib/switches.sh: `floor`, `floor-2t`, `floor-spin`). It forwards every
// frame of one port to the other through sharebufd's own port I/O (datapath/af_packet_port.h:
// the same TPACKET_V2 RX ring, the same sendmmsg with PACKET_QDISC_BYPASS, the same ring and
// batch sizes) and does nothing else: no parsing, no learning, no buffer, no policy, no queues, no
// clock reads, one copy (ring slot → staging slot) where sharebufd makes two (into cells, out of
// them). Whatever sharebufd costs beyond this is its own; what this costs beyond a Linux bridge is
// the price of forwarding in user space on AF_PACKET on that host (docs/datapath-latency.md).
//
// Threads: by default one, serving both ports and blocking in poll() on both rings, which is what
// sharebufd's RX workers do at idle (one unparked worker; after a send it takes the answer the
// receiving host's kernel put into the other ring within that sendmmsg). --threads 2: one per
// port, each reading its port and sending on the other, as sharebufd's unparked workers do under
// load (but sending inline, without egress workers). --spin: never block (a polling floor, one
// core per thread). Untagged frames only: a frame whose VLAN tag the kernel stripped, or one
// the ring slot truncated, is counted and dropped (so is a frame beyond a staging batch smaller
// than PortIo::kMaxTxBatch, which sharebufd's defaults never have). Runs until SIGINT/SIGTERM and
// then prints its counters as one JSON line (forwarded, dropped, TX errors and RX ring drops, per
// direction).
//   sharebuf-floor --port p1 --port p2 [--threads 1|2] [--spin]
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/spin_lock.h"
#include "datapath/af_packet_port.h"
#include "datapath/link_control.h"
#include "model/switch_config.h"

namespace {

using sharebuf::datapath::AfPacketPort;
using sharebuf::datapath::PortIo;
using sharebuf::datapath::RxFrame;

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop.store(true, std::memory_order_relaxed);
}

struct Direction {
  AfPacketPort* in = nullptr;
  AfPacketPort* out = nullptr;
  uint64_t forwarded = 0;
  uint64_t dropped = 0;  // tagged or truncated: this floor does not handle them
};

// Moves what `in`'s ring holds (as much as the free staging slots take) into `out`'s staging
// slots and sends it with one sendmmsg. Returns the frames taken from the ring.
uint32_t forward(Direction& d) {
  RxFrame frames[PortIo::kMaxTxBatch];
  const uint32_t taken = d.in->rx_burst(frames, PortIo::kMaxTxBatch - d.out->tx_pending());
  for (uint32_t i = 0; i < taken; ++i) {
    const RxFrame& frame = frames[i];
    uint32_t room = 0;
    uint8_t* slot = d.out->tx_slot(&room);
    if (slot == nullptr || frame.vlan_valid || frame.len != frame.wire_len || frame.len > room) {
      ++d.dropped;
    } else {
      std::memcpy(slot, frame.data, frame.len);
      d.out->tx_commit(frame.len);
      ++d.forwarded;
    }
  }
  d.in->rx_release();
  if (d.out->tx_pending() != 0) {
    d.out->tx_kick();
    // The socket took nothing (its buffer is full): wait for room rather than spin on it.
    if (taken == 0 && d.out->tx_pending() != 0) d.out->tx_wait(1);
  }
  return taken;
}

// Serves `dirs` until stopped: forwards while any ring has frames, then blocks in poll() on the
// rings it reads (or, spinning, looks again at once).
void serve(std::vector<Direction*> dirs, bool spin, const char* name) {
  pthread_setname_np(pthread_self(), name);
  std::vector<pollfd> fds;
  for (Direction* d : dirs)
    fds.push_back({d->in->rx_fd(), POLLIN, 0});
  while (!g_stop.load(std::memory_order_relaxed)) {
    uint32_t moved = 0;
    for (Direction* d : dirs)
      moved += forward(*d);
    if (moved != 0) continue;
    if (spin) {
      sharebuf::common::cpu_relax();
      continue;
    }
    // 100 ms, as sharebufd's RX workers: the stop flag is seen within it.
    poll(fds.data(), fds.size(), 100);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sharebuf-floor: forwards frames between two ports through sharebufd's AF_PACKET port I/O "
      "and nothing else, as a floor to measure sharebufd against"};
  std::vector<std::string> ports;
  unsigned threads = 1;
  bool spin = false;
  app.add_option("--port", ports, "an interface to forward between (twice)")
      ->required()
      ->expected(2);
  app.add_option("--threads", threads,
                 "1: one thread serves both ports (sharebufd at idle); 2: one per port")
      ->check(CLI::Range(1, 2));
  app.add_flag("--spin", spin, "never block in poll(): one core per thread");
  CLI11_PARSE(app, argc, argv);
  if (ports[0] == ports[1]) {
    std::fprintf(stderr, "sharebuf-floor: the two ports must differ\n");
    return 2;
  }

  const sharebuf::model::PortConfig defaults;  // sharebufd's ring and batch sizes
  std::vector<std::unique_ptr<AfPacketPort>> io;
  try {
    for (const std::string& name : ports) {
      const int ifindex = static_cast<int>(if_nametoindex(name.c_str()));
      const uint32_t mtu = sharebuf::datapath::read_mtu(name);
      if (ifindex == 0 || mtu == 0) {
        std::fprintf(stderr, "sharebuf-floor: no interface '%s'\n", name.c_str());
        return 1;
      }
      io.push_back(std::make_unique<AfPacketPort>(name, ifindex, mtu, defaults.rx_ring_frames,
                                                  defaults.tx_batch));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharebuf-floor: %s\n", e.what());
    return 1;
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  Direction forth{io[0].get(), io[1].get()};
  Direction back{io[1].get(), io[0].get()};
  std::printf("running: %s <-> %s, %u thread%s%s\n", ports[0].c_str(), ports[1].c_str(), threads,
              threads == 1 ? "" : "s", spin ? ", spinning" : "");
  std::fflush(stdout);
  if (threads == 1) {
    serve({&forth, &back}, spin, "floor-0");
  } else {
    std::thread second(serve, std::vector<Direction*>{&back}, spin, "floor-1");
    serve({&forth}, spin, "floor-0");
    second.join();
  }
  // ring_drops: frames the kernel found no room for in a port's RX ring. With no buffer of its
  // own, the floor's queue is that ring, and what overflows it is lost where no policy decides.
  std::printf(
      "{\"forwarded\": [%lu, %lu], \"dropped\": [%lu, %lu], \"tx_dropped\": [%lu, %lu], "
      "\"ring_drops\": [%lu, %lu]}\n",
      forth.forwarded, back.forwarded, forth.dropped, back.dropped, io[1]->tx_dropped(),
      io[0]->tx_dropped(), io[0]->rx_socket_stats().drops, io[1]->rx_socket_stats().drops);
  return 0;
}

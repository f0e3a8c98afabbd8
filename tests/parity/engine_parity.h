// Engine parity: one burst of frames, one switch configuration, three engines — the live switch
// (its real RX and egress threads over in-memory ports, tests/datapath/memory_switch.h), the
// replay (sim/replay.h, reading the burst from a pcap file as `sharebuf-replay --pcap` does) and
// ns-3's switch (sim/ns3/switch_facade.h, driven the way SharebufQueueDisc drives it) — and what
// each sends on every port, in order.
//
// Why a burst: all its frames arrive at one instant, so every engine decides on each of them
// with the same buffer before it. The live switch handles a burst of up to RxWorker::kBurst
// frames from one ring as one batch and sends nothing until the batch is admitted (its egress
// threads sleep until woken after it); the replay and ns-3 take an instant's arrivals before its
// departures. From there on each port sends its queues in the scheduler's order, the same code in
// all three. So the wire is comparable frame for frame: each frame of a burst has a size of its
// own, and a frame on the wire is (bytes, a cut copy or not, CE or not).
//
// Where time enters — the Tofino approximation's recirculation, which returns cut copies while
// the port sends — the live switch's order follows its threads, and only the frames sent (not
// their order) are compared with it; the replay and ns-3 share a simulated clock and stay exact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sharebuf::testing {

// A frame as a wire shows it.
struct Tx {
  uint32_t bytes = 0;
  bool cut = false;  // a trimmed (or returned) copy: no longer than the configuration's trim_size
  bool ce = false;   // IP ECN field CE
  bool operator==(const Tx&) const = default;
};
// Per port, what left it, in order.
using Wire = std::vector<std::vector<Tx>>;

// The burst's frames arrive on port 0 at one instant. `dst_port` is where the frame's
// destination MAC is (a [[static_macs]] entry of the scenario, or -1 for an unknown
// destination the switch floods): ns-3 has no MAC table, its routing hands each packet to one
// egress, so ns-3 is given that port (and cannot run a flooding scenario).
struct BurstFrame {
  std::vector<uint8_t> bytes;
  int dst_port = 1;
};
struct Scenario {
  std::string toml;  // sharebufd configuration; every port has a rate (ns-3 needs one)
  std::vector<BurstFrame> burst;
};

// What each engine sent. The replay and ns-3 take the burst 1 ms after the switch is built, so
// a policy's clock-driven state (Occamy's token bucket) has filled as in the live switch, whose
// burst comes milliseconds after it started.
Wire run_live(const Scenario& s);
Wire run_replay(const Scenario& s);
Wire run_ns3(const Scenario& s);

// The same frames per port, order ignored (sorted).
Wire sorted(Wire w);
// Counts on one port's wire.
size_t count_cut(const std::vector<Tx>& port);
size_t count_ce(const std::vector<Tx>& port);
// "port 1: 1042 1043 cut:128 ce:1044 ..." for failure messages.
std::string describe(const Wire& w);

}  // namespace sharebuf::testing

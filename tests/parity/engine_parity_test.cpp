// The behaviours of the switch model, each run on the same burst in all three engines: the live
// switch (threads over in-memory ports), the replay and ns-3's switch (tests/parity/
// engine_parity.h). docs/engine-parity.md lists them with what each engine can and cannot run.
// Every test first checks the behaviour happened (the frames a rule moves are on the wire), then
// that the engines sent the same frames: in the same order where the engines are exact.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/ns3/switch_facade.h"
#include "tests/model/frame_builder.h"
#include "tests/parity/engine_parity.h"

namespace sharebuf::testing {
namespace {

// Ports m0 (hosts 1: the burst comes in here), m1 (host 2) and m2 (host 3), every one at
// 10 Gbit/s with `port_extra` lines, known by static MAC entries; no RX parking (each port's
// worker reads its own ring).
std::string switch_toml(const std::string& body, const std::string& port_extra = "") {
  std::string t = "[switch]\nrx_park_after = 0\n" + body;
  for (int p = 0; p < 3; ++p)
    t += "[[ports]]\ninterface = \"m" + std::to_string(p) + "\"\nrate = \"10Gbit\"\n" + port_extra;
  t += "[[static_macs]]\nmac = \"02:00:00:00:00:02\"\nport = \"m1\"\n";
  t += "[[static_macs]]\nmac = \"02:00:00:00:00:03\"\nport = \"m2\"\n";
  return t;
}

// Frame i of a burst: UDP from host 1 to host `dst_host`, 300 + i payload bytes (each frame of a
// burst has a size of its own), DSCP, ECN bits and UDP source port (its flow) as given.
BurstFrame frame(uint32_t i, uint8_t dst_host, uint8_t dscp = 0, uint8_t ecn = 0,
                 uint16_t flow = 1000, uint32_t base = 300) {
  return {.bytes = build_frame({.dscp = dscp,
                                .ecn = ecn,
                                .src_port = flow,
                                .payload = base + i,
                                .src_last = 1,
                                .dst_last = dst_host}),
          .dst_port = dst_host == 2   ? 1
                      : dst_host == 3 ? 2
                                      : -1};
}

uint32_t bytes_of(const BurstFrame& f) {
  return static_cast<uint32_t>(f.bytes.size());
}

// The three engines on `s`; the replay and ns-3 frame for frame, the live switch frame for frame
// too unless `live_in_order` is false (then the same frames per port).
struct Runs {
  Wire live, replay, ns3;
};
Runs run_all(const Scenario& s, bool with_ns3 = true, bool live_in_order = true) {
  Runs r{run_live(s), run_replay(s), with_ns3 ? run_ns3(s) : Wire{}};
  if (live_in_order) {
    EXPECT_EQ(r.live, r.replay) << "live:" << describe(r.live) << "\nreplay:" << describe(r.replay);
  } else {
    EXPECT_EQ(sorted(r.live), sorted(r.replay))
        << "live:" << describe(r.live) << "\nreplay:" << describe(r.replay);
  }
  if (with_ns3) {
    EXPECT_EQ(r.ns3, r.replay) << "ns-3:" << describe(r.ns3) << "\nreplay:" << describe(r.replay);
  }
  return r;
}

// Class -> queue: DSCP 10 is class "hi" in queue 0, the rest class "lo" in queue 1, served by
// strict priority: every hi frame leaves before the first lo frame.
TEST(EngineParity, ClassMapping) {
  Scenario s{.toml = switch_toml(
                 "[buffer]\nsize = \"4000 cells\"\n[[classes]]\nname = \"hi\"\n"
                 "queue = 0\ndscp = [10]\n[[classes]]\nname = \"lo\"\nqueue = 1\ndscp = [0]\n",
                 "queues = 2\nscheduler = \"sp\"\n")};
  for (uint32_t i = 0; i < 20; ++i)
    s.burst.push_back(frame(i, 2, i % 2 == 1 ? 10 : 0));
  const Runs r = run_all(s);
  ASSERT_EQ(r.replay[1].size(), 20u);
  for (uint32_t k = 0; k < 10; ++k)
    EXPECT_EQ(r.replay[1][k].bytes, bytes_of(s.burst[2 * k + 1])) << "hi frames first";
}

// ECN: ECT frames of a class with ecn_threshold are marked CE while their queue holds more than
// K; the first frames find it shorter and are not.
TEST(EngineParity, EcnMarking) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"4000 cells\"\n[[classes]]\nname = \"dc\"\n"
                                 "ecn_threshold = \"3000B\"\n")};
  for (uint32_t i = 0; i < 24; ++i)
    s.burst.push_back(frame(i, 2, 0, 2));
  const Runs r = run_all(s);
  const size_t ce = count_ce(r.replay[1]);
  EXPECT_GT(ce, 0u);
  EXPECT_LT(ce, 24u);
  EXPECT_FALSE(r.replay[1].front().ce);
}

// Flooding: a frame for an unknown destination leaves every port but its ingress; a known one
// leaves its port only. (ns-3 routes by IP: it has no unknown destinations.)
TEST(EngineParity, FloodingOfUnknownDestinations) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"4000 cells\"\n")};
  for (uint32_t i = 0; i < 12; ++i)
    s.burst.push_back(frame(i, i % 3 == 0 ? 9 : 2));
  const Runs r = run_all(s, /*with_ns3=*/false);
  EXPECT_EQ(r.replay[1].size(), 12u);
  ASSERT_EQ(r.replay[2].size(), 4u);
  EXPECT_EQ(r.replay[2][1].bytes, bytes_of(s.burst[3]));
  EXPECT_TRUE(r.replay[0].empty());
}

// A flooded frame's copies are marked each as its own queue decides: CE toward the long queue,
// not toward the empty one. (The live switch marked the shared bytes once for every copy.)
TEST(EngineParity, FloodedCopiesAreMarkedEachByItsQueue) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"4000 cells\"\n[[classes]]\nname = \"dc\"\n"
                                 "ecn_threshold = \"3000B\"\n")};
  for (uint32_t i = 0; i < 12; ++i)
    s.burst.push_back(frame(i, i < 10 ? 2 : 9, 0, 2));
  const Runs r = run_all(s, /*with_ns3=*/false);
  ASSERT_EQ(r.replay[1].size(), 12u);
  ASSERT_EQ(r.replay[2].size(), 2u);
  EXPECT_TRUE(r.replay[1][11].ce) << "the flooded frame's copy behind 10 frames";
  EXPECT_EQ(count_ce(r.replay[2]), 0u) << "its copy into an empty queue";
}

// Trimming (NDP's ideal switch): what the buffer refuses leaves as a trim_size cut copy through
// the port's trim queue 0, ahead of the data under strict priority.
TEST(EngineParity, TrimmingIdeal) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"600 cells\"\ncell_bytes = 80\n"
                                 "[trimming]\ntrim_size = 128\nheader_reserve = 40\n"
                                 "[[classes]]\nname = \"data\"\nqueue = 1\nalpha = 0.25\n"
                                 "overflow = \"trim\"\n",
                                 "queues = 2\nscheduler = \"sp\"\ntrim_queue = 0\n")};
  for (uint32_t i = 0; i < 40; ++i)
    s.burst.push_back(frame(i, 2, 0, 0, 1000, 900));
  const Runs r = run_all(s);
  const size_t cut = count_cut(r.replay[1]);
  EXPECT_GT(cut, 10u);
  EXPECT_EQ(r.replay[1].size(), 40u) << "each frame left whole or cut";
  EXPECT_TRUE(r.replay[1].front().cut) << "cut copies go first";
}

// Return-to-sender: a refused frame's header goes back out of its ingress port.
TEST(EngineParity, TrimmingReturnToSender) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"600 cells\"\ncell_bytes = 80\n"
                                 "[trimming]\ntrim_size = 128\nheader_reserve = 40\n"
                                 "[[classes]]\nname = \"data\"\nqueue = 1\nalpha = 0.25\n"
                                 "overflow = \"return-to-sender\"\n",
                                 "queues = 2\nscheduler = \"sp\"\ntrim_queue = 0\n")};
  for (uint32_t i = 0; i < 40; ++i)
    s.burst.push_back(frame(i, 2, 0, 0, 1000, 900));
  const Runs r = run_all(s);
  EXPECT_GT(r.replay[0].size(), 10u);
  EXPECT_EQ(count_cut(r.replay[0]), r.replay[0].size()) << "only headers go back";
  EXPECT_EQ(count_cut(r.replay[1]), 0u);
  EXPECT_EQ(r.replay[0].size() + r.replay[1].size(), 40u);
}

// NDP's header queue full: a cut copy its trim queue refuses (header reserve 1, then the pool)
// returns to the sender.
TEST(EngineParity, TrimmingHeaderFullReturns) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"120 cells\"\ncell_bytes = 80\n"
                                 "[trimming]\ntrim_size = 128\nheader_reserve = 1\n"
                                 "[[classes]]\nname = \"data\"\nqueue = 1\nalpha = 4.0\n"
                                 "overflow = \"trim\"\n",
                                 "queues = 2\nscheduler = \"sp\"\ntrim_queue = 0\n")};
  for (uint32_t i = 0; i < 48; ++i)
    s.burst.push_back(frame(i, 2, 0, 0, 1000, 900));
  const Runs r = run_all(s);
  EXPECT_GT(count_cut(r.replay[1]), 0u);
  EXPECT_GT(r.replay[0].size(), 0u) << "some headers found the header queue full";
}

// Trimming's Tofino approximation: refused frames are deflected through a recirculation port and
// cut as they leave it, while the port sends. The live switch's recirculation runs on its
// threads' clock: the same frames, not the same order.
TEST(EngineParity, TrimmingTofinoApprox) {
  Scenario s{.toml = switch_toml(
                 "[buffer]\nsize = \"600 cells\"\ncell_bytes = 80\n"
                 "[trimming]\nmode = \"tofino-approx\"\ntrim_size = 128\nheader_reserve = 40\n"
                 "meter_burst = 16000000\nrecirc_latency = \"1us\"\n"
                 "[[classes]]\nname = \"data\"\nqueue = 1\nalpha = 0.25\n"
                 "overflow = \"trim\"\n",
                 "queues = 2\nscheduler = \"sp\"\ntrim_queue = 0\n")};
  for (uint32_t i = 0; i < 40; ++i)
    s.burst.push_back(frame(i, 2, 0, 0, 1000, 900));
  const Runs r = run_all(s, true, /*live_in_order=*/false);
  EXPECT_GT(count_cut(r.replay[1]), 5u);
}

// LQD push-out: the pool full, an arrival for a short queue pushes frames out of the longest.
TEST(EngineParity, PushOut) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"200 cells\"\ncell_bytes = 80\n"
                                 "[policy]\nname = \"lqd\"\n")};
  for (uint32_t i = 0; i < 30; ++i)
    s.burst.push_back(frame(i, 2, 0, 0, 1000, 500));
  for (uint32_t i = 30; i < 42; ++i)
    s.burst.push_back(frame(i, 3, 0, 0, 1000, 500));
  const Runs r = run_all(s);
  EXPECT_EQ(r.replay[2].size(), 12u) << "the short queue keeps every frame";
  EXPECT_LT(r.replay[1].size(), 30u) << "the long one lost some";
}

// Occamy's reclaim: with tokens of spare memory bandwidth, the head frames of a queue above its
// DT threshold are dropped for the arrivals that follow.
TEST(EngineParity, Reclaim) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"400 cells\"\ncell_bytes = 80\n"
                                 "[policy]\nname = \"occamy\"\nalpha = 1.0\n"
                                 "token_cap_bytes = 3000\n")};
  for (uint32_t i = 0; i < 36; ++i)
    s.burst.push_back(frame(i, i < 30 ? 2 : 3, 0, 0, 1000, 700));
  const Runs r = run_all(s);
  ASSERT_FALSE(r.replay[1].empty());
  EXPECT_NE(r.replay[1].front().bytes, bytes_of(s.burst[0])) << "the head was reclaimed";
}

// IB's DPP: a flow's first dpp_packets - 1 frames go to dpp_queue 0 (strict priority: they leave
// first); the rest to their class's queue 1.
TEST(EngineParity, DppRedirect) {
  Scenario s{.toml = switch_toml("[buffer]\nsize = \"4000 cells\"\n[policy]\nname = \"ib\"\n"
                                 "dpp_packets = 3\ndpp_queue = 0\n[[classes]]\nname = \"data\"\n"
                                 "queue = 1\n",
                                 "queues = 2\nscheduler = \"sp\"\n")};
  for (uint32_t i = 0; i < 16; ++i)
    s.burst.push_back(frame(i, 2, 0, 0, static_cast<uint16_t>(1000 + i % 2)));
  const Runs r = run_all(s);
  ASSERT_EQ(r.replay[1].size(), 16u);
  for (uint32_t k = 0; k < 4; ++k)
    EXPECT_EQ(r.replay[1][k].bytes, bytes_of(s.burst[k])) << "each flow's first two first";
  EXPECT_EQ(r.replay[1][4].bytes, bytes_of(s.burst[4]));
}

// The probe view: admission reads the registers of the latest probe boundary (an empty buffer,
// for a burst inside one interval), so DT admits what the exact view refuses.
TEST(EngineParity, ProbeView) {
  const std::string buffer = "[buffer]\nsize = \"300 cells\"\ncell_bytes = 80\n";
  const std::string policy = "[policy]\nname = \"dt\"\nalpha = 0.5\n";
  Scenario s{.toml = switch_toml(buffer + "view = \"probe\"\nprobe_interval = \"1s\"\n" + policy)};
  Scenario exact{.toml = switch_toml(buffer + policy)};
  for (uint32_t i = 0; i < 40; ++i) {
    s.burst.push_back(frame(i, 2, 0, 0, 1000, 500));
    exact.burst.push_back(frame(i, 2, 0, 0, 1000, 500));
  }
  const Runs r = run_all(s);
  EXPECT_GT(r.replay[1].size(), run_replay(exact)[1].size()) << "the probe view admits more";
}

// Probes' cost on the wire ([buffer] probe_bytes) is modelled by the live switch and the replay
// (their own tests: ProbeCharge, replay_test) on clocks that differ by nature; ns-3's switch
// refuses the key rather than ignore it.
TEST(EngineParity, ProbeBytesAreRefusedByNs3) {
  try {
    sim::SwitchFacade::from_toml(switch_toml("[buffer]\nsize = \"300 cells\"\nview = \"probe\"\n"
                                             "probe_bytes = 39\n"),
                                 "parity.toml");
    ADD_FAILURE() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("probe_bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sharebuf::testing

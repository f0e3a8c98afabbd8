// The C++17 facade ns-3 uses (sim/ns3/switch_facade.h): the caller's handles come back in the
// order the scheduler sends them, LQD's push-outs and Occamy's reclaims name the handles they
// evicted, the class's ECN threshold marks, and a port without a rate is refused.
#include "sim/ns3/switch_facade.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace sharebuf::sim {
namespace {

std::unique_ptr<SwitchFacade> make(const std::string& policy, const std::string& extra = "") {
  return SwitchFacade::from_toml(R"([buffer]
size = "100 cells"
cell_bytes = 80
[policy]
name = ")" + policy + R"("
)" + extra + R"(
[[ports]]
interface = "a"
rate = "1Gbit"
[[ports]]
interface = "b"
rate = "1Gbit"
)",
                                 "facade.toml");
}

TEST(SwitchFacade, HandlesComeBackInOrder) {
  auto sw = make("cs");
  for (uint64_t h = 10; h < 13; ++h)
    ASSERT_TRUE(sw->arrive({.port = 1, .bytes = 800, .flow_hash = 7}, 1000 + h, h).admitted);
  EXPECT_EQ(sw->queue_cells(1, 0), 30u);
  SwitchFacade::Departure d;
  for (uint64_t h = 10; h < 13; ++h) {
    ASSERT_TRUE(sw->next(1, 5000, &d));
    EXPECT_EQ(d.handle, h);
    EXPECT_EQ(d.bytes, 800u);
  }
  EXPECT_FALSE(sw->next(1, 6000, &d));
  EXPECT_FALSE(sw->next(0, 6000, &d));
  EXPECT_EQ(sw->total_cells(), 0u);
}

TEST(SwitchFacade, PushOutNamesTheEvictedHandles) {
  auto sw = make("lqd");
  // Port a's queue takes the whole buffer (10 frames of 10 cells).
  for (uint64_t h = 1; h <= 10; ++h)
    ASSERT_TRUE(sw->arrive({.port = 0, .bytes = 800, .flow_hash = 1}, h, h).admitted);
  // An arrival to the empty port b pushes out a's newest frame.
  const SwitchFacade::Outcome out = sw->arrive({.port = 1, .bytes = 800, .flow_hash = 2}, 20, 99);
  EXPECT_TRUE(out.admitted);
  ASSERT_EQ(out.evicted.size(), 1u);
  EXPECT_EQ(out.evicted[0].handle, 10u);
  EXPECT_STREQ(out.evicted[0].reason, "pushed_out");
  EXPECT_EQ(sw->queue_cells(0, 0), 90u);
}

TEST(SwitchFacade, ReclaimNamesTheHeadItDropped) {
  auto sw = make("occamy", "alpha = 1.0\n");
  // DT's limit for port a's queue: 5 frames of 10 cells (50 < Rem 50 refuses the sixth).
  for (uint64_t h = 1; h <= 5; ++h)
    ASSERT_TRUE(sw->arrive({.port = 0, .bytes = 800, .flow_hash = 1}, h, h).admitted);
  ASSERT_FALSE(sw->arrive({.port = 0, .bytes = 800, .flow_hash = 1}, 6, 6).admitted);
  ASSERT_TRUE(sw->arrive({.port = 1, .bytes = 800, .flow_hash = 2}, 1'000'000, 7).evicted.empty());
  // Rem 40 now: a's 50 cells are over; a millisecond filled the bucket (20 cells): a loses its
  // oldest frame, one, after which it is at its threshold again.
  const SwitchFacade::Outcome out =
      sw->arrive({.port = 1, .bytes = 800, .flow_hash = 2}, 2'000'000, 8);
  EXPECT_TRUE(out.admitted);
  ASSERT_EQ(out.evicted.size(), 1u);
  EXPECT_EQ(out.evicted[0].handle, 1u);
  EXPECT_STREQ(out.evicted[0].reason, "reclaimed");
  EXPECT_EQ(sw->counters(0, 0).pushed_out, 1u);
  EXPECT_EQ(sw->queue_cells(0, 0), 40u);
}

TEST(SwitchFacade, EcnThresholdMarksAndRefusalsSayWhy) {
  auto sw = make("dt", "alpha = 1.0\n[[classes]]\nname = \"x\"\necn_threshold = 20\n");
  EXPECT_FALSE(sw->arrive({.port = 0, .bytes = 800, .ect = true, .flow_hash = 1}, 1, 1).mark_ce);
  EXPECT_FALSE(sw->arrive({.port = 0, .bytes = 800, .ect = true, .flow_hash = 1}, 2, 2).mark_ce);
  EXPECT_FALSE(sw->arrive({.port = 0, .bytes = 800, .ect = true, .flow_hash = 1}, 3, 3)
                   .mark_ce);  // 20 cells: not more than K
  EXPECT_TRUE(sw->arrive({.port = 0, .bytes = 800, .ect = true, .flow_hash = 1}, 4, 4).mark_ce);
  EXPECT_FALSE(
      sw->arrive({.port = 0, .bytes = 800, .flow_hash = 1}, 5, 5).mark_ce);  // not ECN-capable
  // DT with alpha 1 caps the queue at half the buffer.
  SwitchFacade::Outcome last;
  for (uint64_t h = 6; h < 20; ++h)
    last = sw->arrive({.port = 0, .bytes = 800, .ect = true, .flow_hash = 1}, h, h);
  EXPECT_FALSE(last.admitted);
  EXPECT_EQ(last.drop_reason, "threshold");
}

// ABM's boost follows the sender's tag where there is one, and the recording keeps the flow hash
// and the tag for the replay.
TEST(SwitchFacade, TheFirstBdpTagReachesAbmAndTheRecording) {
  // 100 cells, 10 a frame: a known flow's frames stop at 0.5 x Rem; a first-BDP frame's at 64 x.
  const auto sw = make("abm", "base_rtt_us = 0.001");
  sw->record();
  uint64_t h = 1;
  for (; h <= 4; ++h)  // untagged: the flow table learns flow 5
    ASSERT_TRUE(sw->arrive({.port = 0, .bytes = 800, .flow_hash = 5}, h, h).admitted);
  // 40 cells queued, Rem 60: 0.5 x 60 = 30 refuses the untagged and the "not first BDP" frame...
  EXPECT_FALSE(sw->arrive({.port = 0, .bytes = 800, .flow_hash = 5}, 1000, h++).admitted);
  EXPECT_FALSE(
      sw->arrive({.port = 0, .bytes = 800, .flow_hash = 5, .first_bdp = 0}, 1000, h++).admitted);
  // ...and a first-BDP frame of the same, long-known flow is admitted.
  EXPECT_TRUE(
      sw->arrive({.port = 0, .bytes = 800, .flow_hash = 5, .first_bdp = 1}, 1000, h++).admitted);
  const std::string csv = sw->arrivals_csv();
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "time_ns,port,queue,bytes,class,flow_hash,first_bdp,ect,in_port");
  EXPECT_NE(csv.find("\n1000,0,0,800,0,5,,0,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1000,0,0,800,0,5,1,0,\n"), std::string::npos) << csv;
}

// The queue disc's attributes: configuration text, overrides, ports from the node's devices.
TEST(SwitchFacade, FromSpecMakesThePortsAndAppliesTheOverrides) {
  SwitchFacade::Spec spec;
  spec.config = "[buffer]\nsize = \"100 cells\"\ncell_bytes = 80\n[ports]\nqueues = 2\n";
  spec.source = "attrs";
  spec.overrides = {"policy={name = \"lqd\"}", "buffer.size=\"200 cells\""};
  spec.port_rates_bps = {1'000'000'000, 10'000'000'000, 1'000'000'000};
  const auto sw = SwitchFacade::from_spec(spec);
  EXPECT_EQ(sw->ports(), 3u);
  EXPECT_EQ(sw->port_rate_bps(1), 10'000'000'000u);
  EXPECT_EQ(sw->queues(2), 2u);  // every port takes the [ports] settings
  EXPECT_EQ(sw->capacity_cells(), 200u);
  EXPECT_EQ(sw->policy_name(), "lqd");
  // Errors name the override or the key.
  spec.overrides = {"policy={name = \"nope\"}"};
  EXPECT_THROW(
      {
        try {
          SwitchFacade::from_spec(spec);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos) << e.what();
          throw;
        }
      },
      std::runtime_error);
  spec.overrides = {};
  spec.config = "[ports]\nrate = \"1Gbit\"\n";
  EXPECT_THROW(SwitchFacade::from_spec(spec), std::runtime_error);  // rates are the devices'
  spec.config = "[buffer\n";
  EXPECT_THROW(SwitchFacade::from_spec(spec), std::runtime_error);  // not TOML
}

TEST(SwitchFacade, APortWithoutARateIsRefused) {
  try {
    SwitchFacade::from_toml("[buffer]\nsize = 100\n[[ports]]\ninterface = \"a\"\n", "norate.toml");
    FAIL() << "accepted a port without a rate";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("key 'rate'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SwitchFacade::from_toml("[buffer\n", "bad.toml"), std::runtime_error);
}

// A class that trims: a refused packet becomes a cut copy with a handle of its own, in its port's
// trim queue, named in the outcome with the packet it was cut from; next() sends the copy.
constexpr const char* kTrim =
    "[buffer]\nsize = 40\ncell_bytes = 100\n[policy]\nname = \"static\"\n"
    "cap_cells = [20, 20, 20, 20]\n[[classes]]\nname = \"hdr\"\n[[classes]]\nname = \"data\"\n"
    "queue = 1\noverflow = \"OVERFLOW\"\n[classify]\nmode = \"dscp\"\n"
    "[[ports]]\ninterface = \"a\"\nrate = \"1Gbit\"\nqueues = 2\nscheduler = \"sp\"\n"
    "default_class = \"data\"\n[[ports]]\ninterface = \"b\"\nrate = \"1Gbit\"\nqueues = 2\n"
    "scheduler = \"sp\"\ndefault_class = \"data\"\n[trimming]\ntrim_size = 64\n"
    "trim_dscp = 5\nheader_reserve = 0\n";

std::unique_ptr<SwitchFacade> trimming(const std::string& overflow) {
  std::string text = kTrim;
  text.replace(text.find("OVERFLOW"), 8, overflow);
  return SwitchFacade::from_toml(text, "trim.toml");
}

TEST(SwitchFacade, ARefusedPacketBecomesACopyOfItsOwn) {
  auto sw = trimming("trim");
  // Queue 1 of port a holds 20 cells: two 1000-byte packets; the third is refused and cut.
  for (uint64_t h = 1; h <= 2; ++h)
    ASSERT_TRUE(sw->arrive({.port = 0, .bytes = 1000, .in_port = 1}, h, h).admitted);
  const SwitchFacade::Outcome out = sw->arrive({.port = 0, .bytes = 1000, .in_port = 1}, 3, 3);
  EXPECT_FALSE(out.admitted);
  ASSERT_EQ(out.copies.size(), 1u);
  const SwitchFacade::Copy& c = out.copies[0];
  EXPECT_EQ(c.of, 3u);
  EXPECT_NE(c.handle, 3u);
  EXPECT_EQ(c.port, 0u);
  EXPECT_EQ(c.queue, 0u);  // the port's trim queue
  EXPECT_EQ(c.bytes, 64u);
  EXPECT_EQ(c.dscp, 5);
  EXPECT_FALSE(c.returned);
  // The header queue goes first (strict priority): the copy leaves before the data.
  SwitchFacade::Departure d;
  ASSERT_TRUE(sw->next(0, 10, &d));
  EXPECT_EQ(d.handle, c.handle);
  EXPECT_EQ(d.bytes, 64u);
}

TEST(SwitchFacade, AReturnedCopyLeavesByTheIngressPort) {
  auto sw = trimming("return-to-sender");
  for (uint64_t h = 1; h <= 2; ++h)
    ASSERT_TRUE(sw->arrive({.port = 0, .bytes = 1000, .in_port = 1}, h, h).admitted);
  const SwitchFacade::Outcome out = sw->arrive({.port = 0, .bytes = 1000, .in_port = 1}, 3, 3);
  ASSERT_EQ(out.copies.size(), 1u);
  EXPECT_EQ(out.copies[0].port, 1u);
  EXPECT_TRUE(out.copies[0].returned);
  EXPECT_EQ(out.copies[0].dscp, -1);  // return_dscp unset: the original's
  SwitchFacade::Departure d;
  ASSERT_TRUE(sw->next(1, 10, &d));
  EXPECT_EQ(d.handle, out.copies[0].handle);
}

// Return-to-sender and the pipelines need the ingress port: a packet without one is refused.
TEST(SwitchFacade, ATrimmingClassNeedsTheIngressPort) {
  auto sw = trimming("trim");
  EXPECT_THROW(sw->arrive({.port = 0, .bytes = 1000}, 1, 1), std::logic_error);
  auto plain = trimming("drop");
  EXPECT_TRUE(plain->arrive({.port = 0, .bytes = 1000}, 1, 1).admitted);
}

}  // namespace
}  // namespace sharebuf::sim

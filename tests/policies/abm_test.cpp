// ABM: FB's factors with DT's alpha, and the first-RTT alpha for new flows.
#include "policies/abm.h"

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"

namespace sharebuf::policies {
namespace {

struct AbmFixture : ::testing::Test {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{.num_queues = 2}, buffer::PortSpec{}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  AbmPolicy abm{Params{}, PolicyEnv{.layout = &layout}};  // alpha 0.5, first RTT 64, 10 us
  void TearDown() override {
    for (uint32_t q = 0; q < 3; ++q)
      state.release(q, state.queue_cells(q));
  }
};

TEST_F(AbmFixture, FirstRttOfAFlowUsesTheLargeAlpha) {
  ASSERT_TRUE(state.try_reserve(2, 400));  // Rem = 600; threshold 0.5 * 600 = 300 for known flows
  EXPECT_TRUE(abm.first_rtt(77, 1'000));
  EXPECT_TRUE(abm.first_rtt(77, 10'999));   // within 10 us of its first frame
  EXPECT_FALSE(abm.first_rtt(77, 11'001));  // past it
  EXPECT_FALSE(abm.first_rtt(0, 1'000));    // no flow hash: never first-RTT
  // A queue at 400 cells: a known flow's frame is refused, a new flow's accepted (64 * Rem).
  EXPECT_FALSE(
      abm.admit({.now_ns = 20'000, .queue = 2, .cells = 1, .flow_hash = 77}, view).accepted());
  EXPECT_TRUE(
      abm.admit({.now_ns = 20'000, .queue = 2, .cells = 1, .flow_hash = 78}, view).accepted());
  EXPECT_EQ(abm.threshold_cells(2, 0, view), 300u);
}

TEST_F(AbmFixture, AFlowUnseenForTheAgeingTimeIsNewAgain) {
  EXPECT_TRUE(abm.first_rtt(5, 1'000));
  EXPECT_FALSE(abm.first_rtt(5, 500'000));
  EXPECT_FALSE(abm.first_rtt(5, 1'400'000));  // seen 0.9 ms ago: still known
  EXPECT_TRUE(abm.first_rtt(5, 2'500'000));   // unseen for 1.1 ms: a new flow
}

TEST_F(AbmFixture, FlowsSharingASetDoNotEvictEachOther) {
  // 4096 entries in sets of 4: hashes equal modulo 4096 share a set (and would share a slot of
  // a direct-mapped table). Four long flows there interleaving frames all stay known; a fifth
  // replaces the one seen least recently.
  const uint32_t flows[] = {3, 3 + 4096, 3 + 8192, 3 + 12288};
  for (uint32_t f : flows)
    EXPECT_TRUE(abm.first_rtt(f, 1'000));
  for (uint64_t t = 20'000; t < 100'000; t += 20'000)
    for (uint32_t f : flows)
      EXPECT_FALSE(abm.first_rtt(f, t)) << "flow " << f << " at " << t;
  EXPECT_TRUE(abm.first_rtt(3 + 16384, 100'000));  // evicts flow 3, seen least recently
  EXPECT_FALSE(abm.first_rtt(3 + 4096, 120'000));
  EXPECT_TRUE(abm.first_rtt(3, 120'000));  // came back: new again
}

TEST_F(AbmFixture, TheSendersTagDecidesWhereThereIsOne) {
  ASSERT_TRUE(state.try_reserve(2, 400));  // threshold 300 at alpha 0.5, 64 x 600 at the boost
  // A flow the table has known for long: its tagged frames still get the boost...
  EXPECT_TRUE(abm.first_rtt(77, 1'000));
  const ArrivalContext tagged{
      .now_ns = 50'000, .queue = 2, .cells = 1, .flow_hash = 77, .first_bdp = FirstBdp::kYes};
  EXPECT_TRUE(abm.admit(tagged, view).accepted());
  // ...and a new flow's frames tagged "not in the first BDP" do not.
  const ArrivalContext later{
      .now_ns = 50'000, .queue = 2, .cells = 1, .flow_hash = 99, .first_bdp = FirstBdp::kNo};
  EXPECT_FALSE(abm.admit(later, view).accepted());
  // The tag is not the table's business: flow 99 is still new to it.
  EXPECT_TRUE(abm.first_rtt(99, 50'000));
}

TEST(Abm, FirstBdpBytesCountsTheFlowsBytesInsteadOfTime) {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}}};
  AbmPolicy abm{Params{.values = {{"first_bdp_bytes", 3000}}}, PolicyEnv{.layout = &layout}};
  EXPECT_TRUE(abm.first_rtt(7, 1'000, 1500));      // bytes 0..1499
  EXPECT_TRUE(abm.first_rtt(7, 900'000, 1500));    // 1500..2999: long after, still the first BDP
  EXPECT_FALSE(abm.first_rtt(7, 900'001, 64));     // 3000..: past it
  EXPECT_TRUE(abm.first_rtt(8, 900'001, 64));      // another flow
  EXPECT_TRUE(abm.first_rtt(7, 9'000'000, 1500));  // unseen past the ageing time: new again
}

TEST_F(AbmFixture, UsesFbFactors) {
  ASSERT_TRUE(state.try_reserve(0, 100));  // port 0 has two queues; q0 busy
  // Arrival at q1: N_p = 2 (q0 and the arrival), share 1/2, Rem 900: 0.5 / 2 * 0.5 * 900.
  EXPECT_EQ(abm.threshold_cells(1, 0, view), static_cast<uint32_t>(std::ceil(0.5 / 2 * 0.5 * 900)));
}

}  // namespace
}  // namespace sharebuf::policies

// Reverie: a low-pass filtered queue length against alpha * Rem / N, every number computed by hand
// from the rule in policies/reverie.h (the authors' switch-mmu.cc).
#include "policies/reverie.h"

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

// 1000 cells of 80 B; two ports of one queue each (queue index 0 on both: one N).
// congestion_bytes 1600 = 20 cells.
struct ReverieTable : ::testing::Test {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}, buffer::PortSpec{}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  ReveriePolicy reverie{Params{.values = {{"alpha", 1.0}, {"congestion_bytes", 1600}}},
                        PolicyEnv{.layout = &layout}};

  ArrivalContext frame(uint32_t queue) const {
    return {.queue = queue, .port = static_cast<uint16_t>(queue), .cells = 1, .bytes = 80};
  }
  bool admit(uint32_t queue) { return reverie.admit(frame(queue), view).accepted(); }
  // One departure of a cell from q, as the egress step reports it (after the release).
  void depart(uint32_t q) {
    state.release(q, 1);
    reverie.on_dequeue({.queue = q, .port = static_cast<uint16_t>(q), .cells = 1, .bytes = 80},
                       view);
  }
  void TearDown() override {
    for (uint32_t q = 0; q < 2; ++q)
      state.release(q, state.queue_cells(q));
  }
};

TEST_F(ReverieTable, TheFilterMovesOnlyAtDepartures) {
  ReveriePolicy half{Params{.values = {{"gamma", 0.5}}}, PolicyEnv{.layout = &layout}};
  ASSERT_TRUE(state.try_reserve(0, 101));
  EXPECT_EQ(half.filtered_cells(0), 0.0);  // 101 cells arrived: arrivals leave L alone
  const DequeueEvent ev{.queue = 0, .cells = 1};
  state.release(0, 1);
  half.on_dequeue(ev, view);
  EXPECT_DOUBLE_EQ(half.filtered_cells(0), 50.0);  // 0.5 x 0 + 0.5 x 100
  state.release(0, 1);
  half.on_dequeue(ev, view);
  EXPECT_DOUBLE_EQ(half.filtered_cells(0), 74.5);  // 0.5 x 50 + 0.5 x 99
  state.release(0, 89);
  half.on_dequeue(ev, view);
  EXPECT_DOUBLE_EQ(half.filtered_cells(0), 10.0);  // 0.5 x 74.5 + 0.5 x 10 = 42.25 > Q = 10
}

// Queue 0 holds 600 cells that arrived at once: L = 0, so the frame meets T = 1 x 400 / 1 and
// is admitted, where DT (Q = 600 >= alpha x Rem = 400) refuses it.
TEST_F(ReverieTable, ABurstIsJudgedByItsFilteredLength) {
  ASSERT_TRUE(state.try_reserve(0, 601));
  depart(0);  // gamma 0.999: L = 0.001 x 600 = 0.6
  EXPECT_NEAR(reverie.filtered_cells(0), 0.6, 1e-9);
  EXPECT_TRUE(admit(0));  // 0.6 + 1 <= 400
  EXPECT_EQ(reverie.threshold_cells(0, 0, view), 400u);
}

TEST_F(ReverieTable, AStandingQueueMeetsTheThreshold) {
  ReveriePolicy now{Params{.values = {{"gamma", 0.0}, {"congestion_bytes", 1600}}},
                    PolicyEnv{.layout = &layout}};
  ASSERT_TRUE(state.try_reserve(0, 500));
  state.release(0, 1);
  now.on_dequeue({.queue = 0, .cells = 1}, view);     // gamma 0: L = Q = 499, Rem 501
  EXPECT_TRUE(now.admit(frame(0), view).accepted());  // 499 + 1 <= 501
  ASSERT_TRUE(state.try_reserve(0, 2));
  state.release(0, 1);
  now.on_dequeue({.queue = 0, .cells = 1}, view);  // L = Q = 500, Rem 500
  const Verdict v = now.admit(frame(0), view);
  EXPECT_FALSE(v.accepted());  // 500 + 1 > 500
  EXPECT_EQ(v.reason, DropReason::kThreshold);
}

// N is refreshed for a queue only when a frame arrives at it (SwitchMmu::setCongested is called
// from ReverieThreshold): the count an arrival sees can be stale for the other queues.
TEST_F(ReverieTable, CongestedQueuesAreSaturationsRefreshedAtArrivals) {
  ReveriePolicy now{Params{.values = {{"gamma", 0.0}, {"congestion_bytes", 1600}}},
                    PolicyEnv{.layout = &layout}};
  auto set_filtered = [&](uint32_t q, uint32_t cells) {  // Q = L = cells after one departure
    ASSERT_TRUE(state.try_reserve(q, cells + 1));
    state.release(q, 1);
    now.on_dequeue({.queue = q, .port = static_cast<uint16_t>(q), .cells = 1}, view);
  };
  set_filtered(0, 10);   // s = 10 / 20 = 0.5
  set_filtered(1, 290);  // s = 1; Rem = 700
  // q1's arrival: s1 = 1, s0 not yet refreshed (0): N = 1, T = 700: 291 <= 700.
  EXPECT_TRUE(now.admit(frame(1), view).accepted());
  EXPECT_DOUBLE_EQ(now.congested(1), 1.0);
  // q0's arrival refreshes s0 = 0.5: N = 1.5, T = 466.67: 11 <= T.
  EXPECT_TRUE(now.admit(frame(0), view).accepted());
  EXPECT_DOUBLE_EQ(now.congested(0), 1.5);
  // q1 again: T = 700 / 1.5 = 466.67: 291 <= T still; grow q1 to L = 470 and it is refused.
  EXPECT_TRUE(now.admit(frame(1), view).accepted());
  state.release(1, 290);
  set_filtered(1, 470);  // Rem = 1000 - 10 - 470 = 520; T = 520 / 1.5 = 346.67
  EXPECT_FALSE(now.admit(frame(1), view).accepted());
  EXPECT_EQ(now.threshold_cells(1, 0, view), 346u);
}

TEST_F(ReverieTable, FirstRttFramesUseTheLargeAlpha) {
  ReveriePolicy now{Params{.values = {{"gamma", 0.0}}}, PolicyEnv{.layout = &layout}};
  ASSERT_TRUE(state.try_reserve(0, 701));
  state.release(0, 1);
  now.on_dequeue({.queue = 0, .cells = 1}, view);  // L = 700, Rem 300: refused at alpha 1
  ArrivalContext tagged = frame(0);
  EXPECT_FALSE(now.admit(tagged, view).accepted());
  tagged.first_bdp = FirstBdp::kYes;  // T = 1024 x 300
  EXPECT_TRUE(now.admit(tagged, view).accepted());
}

TEST_F(ReverieTable, AFrameThatDoesNotFitIsPoolFull) {
  ASSERT_TRUE(state.try_reserve(1, 1000));  // L = 0 everywhere, Rem = 0
  const Verdict v = reverie.admit(frame(0), view);
  EXPECT_FALSE(v.accepted());
  EXPECT_EQ(v.reason, DropReason::kPoolFull);
}

TEST(Reverie, BadParametersAreRefusedByName) {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}}};
  EXPECT_THROW(ReveriePolicy(Params{.values = {{"gamma", 1.0}}}, PolicyEnv{.layout = &layout}),
               ConfigError);
  EXPECT_THROW(
      ReveriePolicy(Params{.values = {{"congestion_bytes", 0}}}, PolicyEnv{.layout = &layout}),
      ConfigError);
}

// Through the real admission step: a burst into an empty queue is admitted past DT's limit while
// the filter lags, and the queue then settles where DT's would, Q + 1 <= B - Q (alpha 1).
class ReverieOverTime : public testing::PolicyHarness {};

TEST_F(ReverieOverTime, ABurstIsAbsorbedThenTheQueueSettlesAtTheThreshold) {
  build({.capacity_cells = 1000, .ports = {buffer::PortSpec{}}}, "reverie",
        {{"alpha", 1.0}, {"gamma", 0.9}});
  int admitted = 0;
  for (int i = 0; i < 700; ++i)
    admitted += offer(0, 1) ? 1 : 0;
  EXPECT_EQ(admitted, 700);  // DT at alpha 1 stops at Q < B - Q: 500
  for (int i = 0; i < 5000; ++i) {
    offer(0, 1);
    depart(0);
  }
  EXPECT_GE(occupancy(0), 495u);
  EXPECT_LE(occupancy(0), 500u);
}

}  // namespace
}  // namespace sharebuf::policies

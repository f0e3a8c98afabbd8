// EDT: one test per rule of the state machine documented in policies/edt.h.
#include "policies/edt.h"

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "tests/fixtures/occupancy.h"

namespace sharebuf::policies {
namespace {

struct EdtFixture : ::testing::Test {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{.num_queues = 2}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  EdtPolicy edt{[] {
                  Params p;
                  p.values = {{"near_empty_cells", 10}, {"time_limit_us", 100}};
                  return p;
                }(),
                PolicyEnv{.layout = &layout}};

  void set(uint32_t q, uint32_t cells) { testing::set_queue_cells(state, q, cells); }
  bool arrive(uint32_t q, uint64_t t) {
    return edt.admit({.now_ns = t, .queue = q, .cells = 1}, view).accepted();
  }
  void TearDown() override {
    set(0, 0);
    set(1, 0);
  }
};

TEST_F(EdtFixture, BurstFromEmptyIsUncontrolledAndUsesTheWholeBuffer) {
  EXPECT_TRUE(arrive(0, 1000));
  EXPECT_TRUE(edt.uncontrolled(0));
  set(0, 700);                   // far beyond DT's 1 * Rem = 300 ...
  EXPECT_TRUE(arrive(0, 2000));  // ... still accepted: CS while the burst grows
  EXPECT_EQ(edt.describe(view)["state"]["queues"][0], "uncontrolled");
}

TEST_F(EdtFixture, QueueThatStopsGrowingReturnsToDt) {
  arrive(0, 1000);
  set(0, 700);
  arrive(0, 2000);
  set(0, 690);                    // shorter than at the previous arrival
  EXPECT_FALSE(arrive(0, 3000));  // DT: 690 >= Rem 310
  EXPECT_FALSE(edt.uncontrolled(0));
}

TEST_F(EdtFixture, TimeLimitEndsTheUncontrolledState) {
  arrive(0, 1000);
  set(0, 700);
  EXPECT_TRUE(arrive(0, 50'000));
  set(0, 710);
  EXPECT_FALSE(arrive(0, 1000 + 100'001));  // 100 us after the burst started
  EXPECT_FALSE(edt.uncontrolled(0));
}

TEST_F(EdtFixture, OnlyAnArmedQueueStartingNearEmptyEntersAndItRearmsWhenEmpty) {
  set(1, 50);  // not near empty: stays controlled (DT)
  EXPECT_TRUE(arrive(1, 1000));
  EXPECT_FALSE(edt.uncontrolled(1));
  arrive(0, 1000);  // burst on queue 0 ...
  set(0, 20);
  arrive(0, 1200);
  set(0, 5);
  arrive(0, 1500);  // ... ends: it shrank
  EXPECT_FALSE(edt.uncontrolled(0));
  arrive(0, 2000);  // near empty but disarmed: stays controlled
  EXPECT_FALSE(edt.uncontrolled(0));
  set(0, 0);
  edt.on_dequeue({.now_ns = 2500, .queue = 0}, view);  // seen empty: armed again
  arrive(0, 3000);
  EXPECT_TRUE(edt.uncontrolled(0));
}

// describe() counts the bursts, how each ended, and the frames only the burst let in.
TEST_F(EdtFixture, DescribeCountsBurstsHowTheyEndedAndWhatTheyAdmittedOverDt) {
  arrive(0, 1000);  // burst 1 starts
  set(0, 700);      // beyond DT's 300
  arrive(0, 2000);  // admitted over DT
  set(0, 690);      // shrank: burst 1 ends
  arrive(0, 3000);
  set(0, 0);
  edt.on_dequeue({.now_ns = 3500, .queue = 0}, view);
  arrive(0, 4000);  // burst 2 starts
  set(0, 710);
  arrive(0, 5000);            // admitted over DT
  arrive(0, 4000 + 100'001);  // time limit: burst 2 ends
  const auto b = edt.describe(view)["state"]["bursts"];
  EXPECT_EQ(b["started"], 2);
  EXPECT_EQ(b["ended_shrinking"], 1);
  EXPECT_EQ(b["ended_time_limit"], 1);
  EXPECT_EQ(b["admitted_over_dt"], 2);
}

TEST_F(EdtFixture, ControlledQueueIsDt) {
  set(1, 50);
  arrive(1, 1000);
  set(1, 474);  // Rem = 526 > 474: accepted
  EXPECT_TRUE(arrive(1, 2000));
  set(1, 500);  // Rem = 500: refused
  EXPECT_FALSE(arrive(1, 3000));
  EXPECT_EQ(edt.threshold_cells(1, 0, view), 500u);
}

// Uncontrolled or not, a frame that does not fit is refused for that: pool_full, not threshold.
TEST_F(EdtFixture, AFrameThatDoesNotFitIsPoolFull) {
  EXPECT_TRUE(arrive(0, 1000));
  ASSERT_TRUE(edt.uncontrolled(0));
  set(0, 1000);  // the whole buffer
  const Verdict v = edt.admit({.now_ns = 2000, .queue = 0, .cells = 1}, view);
  EXPECT_EQ(v.action, Action::kDrop);
  EXPECT_EQ(v.reason, DropReason::kPoolFull);
  edt.admit({.now_ns = 1'000'000, .queue = 0, .cells = 1}, view);  // the time limit ends it
  ASSERT_FALSE(edt.uncontrolled(0));
  const Verdict controlled = edt.admit({.now_ns = 1'000'001, .queue = 0, .cells = 1}, view);
  EXPECT_EQ(controlled.reason, DropReason::kPoolFull);
}

}  // namespace
}  // namespace sharebuf::policies

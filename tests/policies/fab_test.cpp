// FAB: DT's threshold with a flow's first short_bytes admitted at alpha_short; a flow idle for
// the window starts again.
#include "policies/fab.h"

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "policies/registry.h"

namespace sharebuf::policies {
namespace {

struct FabFixture : ::testing::Test {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{.num_queues = 2}, buffer::PortSpec{}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  // alpha 0.5 for long flows, 4 for a flow's first 3000 bytes, window 1 ms.
  FabPolicy fab{
      Params{.values = {{"alpha_short", 4.0}, {"short_bytes", 3000}, {"window_us", 1000.0}}},
      PolicyEnv{.layout = &layout}};
  bool admit(uint32_t flow, uint64_t now_ns, uint32_t bytes = 1500, uint32_t queue = 2) {
    return fab
        .admit({.now_ns = now_ns, .queue = queue, .cells = 19, .bytes = bytes, .flow_hash = flow},
               view)
        .accepted();
  }
  void TearDown() override {
    for (uint32_t q = 0; q < 3; ++q)
      state.release(q, state.queue_cells(q));
  }
};

// Hand computation: 400 cells queued, Rem = 600. A long flow's threshold is 0.5 x 600 = 300, so
// its frame is refused; a short flow's is 4 x 600 = 2400, so its frame is accepted.
TEST_F(FabFixture, AShortFlowsFramesGetTheLargeAlpha) {
  ASSERT_TRUE(state.try_reserve(2, 400));
  EXPECT_TRUE(admit(7, 1'000));   // 0 bytes before it
  EXPECT_TRUE(admit(7, 2'000));   // 1500 before it
  EXPECT_FALSE(admit(7, 3'000));  // 3000 before it: no longer short
  EXPECT_TRUE(admit(8, 3'000));   // another flow, new
  EXPECT_FALSE(admit(0, 3'000));  // no flow hash: the class's alpha
  EXPECT_EQ(fab.threshold_cells(2, 0, view), 300u);
}

// At 250 cells (threshold 0.5 x 750 = 375 for long flows) a long flow is still accepted: FAB is
// DT for flows past their allowance, not stricter.
TEST_F(FabFixture, ALongFlowIsHeldToDt) {
  ASSERT_TRUE(state.try_reserve(2, 250));
  for (uint64_t t = 1'000; t < 4'000; t += 1'000)
    admit(9, t);  // its first 4500 bytes
  EXPECT_TRUE(admit(9, 5'000));
  ASSERT_TRUE(state.try_reserve(2, 60));  // 310 queued: 0.5 x 690 = 345 still above
  EXPECT_TRUE(admit(9, 6'000));
  ASSERT_TRUE(state.try_reserve(2, 30));  // 340 queued: 0.5 x 660 = 330 below
  EXPECT_FALSE(admit(9, 7'000));
}

// The window: a flow idle for longer than window_us starts again with a fresh allowance; one
// that keeps sending does not.
TEST_F(FabFixture, AFlowIdleForTheWindowStartsAgain) {
  ASSERT_TRUE(state.try_reserve(2, 400));
  EXPECT_TRUE(admit(5, 1'000, 3000));
  EXPECT_FALSE(admit(5, 900'000));    // 0.9 ms later: the same flow, past its bytes
  EXPECT_FALSE(admit(5, 1'800'000));  // seen 0.9 ms ago: still the same flow
  EXPECT_TRUE(admit(5, 2'900'000));   // idle 1.1 ms: a new start
}

// The authors' FlowAwareBuffer as coded counts the frame's own bytes before the test. With
// short_bytes 3000 and 1500-byte frames, the intended rule gives a flow's first two frames the
// large alpha (0 and 1500 bytes before them), the as-coded rule only its first (1500, then 3000
// counted). 400 of 1000 cells queued: 0.5 x 600 = 300 refuses a long flow's frame, 4 x 600 takes
// a short one's.
TEST_F(FabFixture, AsCodedCountsTheFrameBeforeTheTest) {
  FabPolicy coded{Params{.values = {{"alpha_short", 4.0},
                                    {"short_bytes", 3000},
                                    {"window_us", 1000.0},
                                    {"variant", "as-coded"}}},
                  PolicyEnv{.layout = &layout}};
  const auto admit_coded = [&](uint32_t flow, uint64_t now_ns) {
    return coded
        .admit({.now_ns = now_ns, .queue = 2, .cells = 19, .bytes = 1500, .flow_hash = flow}, view)
        .accepted();
  };
  ASSERT_TRUE(state.try_reserve(2, 400));
  EXPECT_TRUE(admit(7, 1'000));
  EXPECT_TRUE(admit(7, 2'000));
  EXPECT_TRUE(admit_coded(7, 1'000));              // 1500 counted < 3000
  EXPECT_FALSE(admit_coded(7, 2'000));             // 3000 counted: long
  EXPECT_EQ(coded.params()["short_bytes"], 3000);  // set: kept
}

// Unset, the as-coded variant takes the authors' numbers, and params() says so: 21 000 bytes
// (15 x 1400) and alpha 1024. A 1400-byte-frame flow keeps alpha 1024 for 14 frames (14 x 1400 =
// 19 600 < 21 000; the 15th counts 21 000); the intended defaults (22 500 before the frame) keep
// it for 17 (16 x 1400 = 22 400 < 22 500). 600 of 1000 cells queued, Rem 400: 0.5 x 400 = 200
// refuses a long flow's frame, 64 x 400 and 1024 x 400 take a short one's, so the frames that
// get through are the ones counted short.
TEST(Fab, AsCodedDefaultsAreTheAuthors) {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}}};
  const auto p =
      make_policy("fab", Params{.values = {{"variant", "as-coded"}}}, PolicyEnv{.layout = &layout});
  EXPECT_EQ(p->params()["short_bytes"], 21000);
  EXPECT_EQ(p->params()["alpha_short"], 1024.0);
  buffer::BufferState state{layout};
  const buffer::BufferView view = buffer::BufferView::exact(state);
  ASSERT_TRUE(state.try_reserve(0, 600));
  const auto intended = make_policy("fab", Params{}, PolicyEnv{.layout = &layout});
  const auto through = [&](Policy& policy) {
    int n = 0;
    for (uint64_t i = 0; i < 30; ++i)
      n += policy
               .admit({.now_ns = 1'000 + i, .queue = 0, .cells = 18, .bytes = 1400, .flow_hash = 9},
                      view)
               .accepted();
    return n;
  };
  EXPECT_EQ(through(*p), 14);
  EXPECT_EQ(through(*intended), 17);
  state.release(0, 600);
}

TEST(Fab, RegisteredWithItsDeclaredDefaults) {
  const PolicyInfo* info = find_policy("fab");
  ASSERT_NE(info, nullptr);
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}}};
  const auto p = make_policy("fab", Params{}, PolicyEnv{.layout = &layout});
  EXPECT_EQ(p->params()["alpha"], 0.5);
  EXPECT_EQ(p->params()["alpha_short"], 64.0);
  EXPECT_EQ(p->params()["short_bytes"], 22500);
  EXPECT_EQ(p->params()["window_us"], 5000.0);
  EXPECT_EQ(p->params()["variant"], "intended");
}

}  // namespace
}  // namespace sharebuf::policies

// Protean against Algorithms 1 and 2 of the paper, with hand-computed numbers.
#include "policies/protean.h"

#include <cmath>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "tests/fixtures/occupancy.h"

namespace sharebuf::policies {
namespace {

// One port at 1 Gbit/s with 80-byte cells: 1,562,500 cells/s = 0.0015625 cells/ns.
struct ProteanFixture : ::testing::Test {
  buffer::BufferLayout layout{10000, 80, {buffer::PortSpec{.num_queues = 3}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  PolicyEnv env{.layout = &layout,
                .classes = {TrafficClass{.name = "short", .role = ProteanRole::kShort},
                            TrafficClass{.name = "long", .role = ProteanRole::kLong},
                            TrafficClass{.name = "incast", .role = ProteanRole::kIncast}},
                .port_rate_bps = {1'000'000'000}};

  void set_queue(uint32_t q, uint32_t cells) { testing::set_queue_cells(state, q, cells); }
  void TearDown() override {
    for (uint32_t q = 0; q < 3; ++q)
      set_queue(q, 0);
  }
};

TEST_F(ProteanFixture, HandComputedGradientsAndThresholds) {
  ProteanPolicy p(Params{}, env);  // alpha_incast 1, beta 1/4, buildup 2
  const uint32_t q = 2;
  // Before any dequeue: thr = alpha_incast * Rem.
  EXPECT_DOUBLE_EQ(p.incast_threshold(q, view), 10000);

  // t = 1 ms, Q = 100 (t_prev = 0, Q_prev = 0): g_raw = 100 / 1e6 ns / 0.0015625 = 0.064,
  // g = 0.25 * 0.064 = 0.016; Rem = 9900.
  set_queue(q, 100);
  p.on_dequeue({.now_ns = 1'000'000, .queue = q}, view);
  EXPECT_NEAR(p.gradient(q), 0.016, 1e-12);
  EXPECT_DOUBLE_EQ(p.incast_threshold(q, view), 9900);

  // 10 us later, Q = 200: g_raw = 100 / 10000 / 0.0015625 = 6.4, g = 1.6 + 0.75 * 0.016 = 1.612:
  // still below buildup, thr = Rem = 9800.
  set_queue(q, 200);
  p.on_dequeue({.now_ns = 1'010'000, .queue = q}, view);
  EXPECT_NEAR(p.gradient(q), 1.612, 1e-9);
  EXPECT_DOUBLE_EQ(p.incast_threshold(q, view), 9800);

  // 10 us later, Q = 300: g = 1.6 + 0.75 * 1.612 = 2.809 > 2: thr = 2.809 * 1 * 9700.
  set_queue(q, 300);
  p.on_dequeue({.now_ns = 1'020'000, .queue = q}, view);
  EXPECT_NEAR(p.gradient(q), 2.809, 1e-9);
  EXPECT_NEAR(p.incast_threshold(q, view), 2.809 * 9700, 1e-6);

  // Draining: Q falls back to 250 after 100 us: g_raw = -50 / 1e5 / 0.0015625 = -0.32,
  // g = -0.08 + 0.75 * 2.809 = 2.02675 > 2: still scaled.
  set_queue(q, 250);
  p.on_dequeue({.now_ns = 1'120'000, .queue = q}, view);
  EXPECT_NEAR(p.gradient(q), 2.02675, 1e-9);
  EXPECT_NEAR(p.incast_threshold(q, view), 2.02675 * 9750, 1e-6);
  const auto d = p.describe(view);
  EXPECT_NEAR(d["state"]["gradients"][2].get<double>(), 2.02675, 1e-9);
}

TEST_F(ProteanFixture, ThresholdSwitchesExactlyAboveBuildup) {
  Params params;
  params.values = {{"beta", 1.0}, {"buildup", 2.0}};
  ProteanPolicy p(params, env);
  // With beta = 1 the gradient is the raw one: exactly 2 x line rate is not above buildup.
  set_queue(2, 0);
  p.on_dequeue({.now_ns = 1'000'000, .queue = 2}, view);
  set_queue(2, 32);  // 32 cells in 10 us = 3.2 cells/us = 2 x 1.5625 cells/us
  p.on_dequeue({.now_ns = 1'010'000, .queue = 2}, view);
  EXPECT_DOUBLE_EQ(p.gradient(2), 2.048);
  EXPECT_NEAR(p.incast_threshold(2, view), 2.048 * (10000 - 32), 1e-6);
  set_queue(2, 63);  // 31 cells in 10 us: 1.984 x line rate
  p.on_dequeue({.now_ns = 1'020'000, .queue = 2}, view);
  EXPECT_DOUBLE_EQ(p.incast_threshold(2, view), 10000 - 63);
}

TEST_F(ProteanFixture, ShortFlowsAreCsAndLongFlowsAreDt) {
  ProteanPolicy p(Params{}, env);
  set_queue(0, 9000);  // Rem = 1000
  // Short: accept iff c < Rem, whatever the queue length.
  EXPECT_TRUE(p.admit({.queue = 0, .class_id = 0, .cells = 999}, view).accepted());
  EXPECT_FALSE(p.admit({.queue = 0, .class_id = 0, .cells = 1000}, view).accepted());
  // Long: DT with alpha_long 0.5: Q < 0.5 * Rem.
  set_queue(0, 0);
  set_queue(1, 3000);  // Rem = 7000, T = 3500
  EXPECT_TRUE(p.admit({.queue = 1, .class_id = 1, .cells = 1}, view).accepted());
  set_queue(1, 3400);  // Rem = 6600, T = 3300
  EXPECT_FALSE(p.admit({.queue = 1, .class_id = 1, .cells = 1}, view).accepted());
  EXPECT_EQ(p.threshold_cells(1, 1, view), 3300u);
}

TEST_F(ProteanFixture, TofinoArithmeticTracksExact) {
  Params tofino;
  tofino.values = {{"arithmetic", "tofino"}};
  ProteanPolicy exact(Params{}, env);
  ProteanPolicy approx(tofino, env);
  std::mt19937 rng(3);
  uint64_t t = 1'000'000;
  double error = 0;
  int compared = 0;
  int branch_flips = 0;
  const int steps = 5000;
  for (int i = 0; i < steps; ++i) {
    // Bursty queue: rises at up to 4x line rate, then drains.
    t += 2000 + rng() % 10000;
    const uint32_t q = state.queue_cells(2);
    const uint32_t next = (i / 50) % 2 == 0
                              ? std::min<uint32_t>(q + static_cast<uint32_t>(rng() % 60), 5000)
                              : q - std::min<uint32_t>(q, static_cast<uint32_t>(rng() % 30));
    set_queue(2, next);
    exact.on_dequeue({.now_ns = t, .queue = 2}, view);
    approx.on_dequeue({.now_ns = t, .queue = 2}, view);
    const bool exact_burst = exact.gradient(2) > 2.0;
    if (exact_burst != (approx.gradient(2) > 2.0)) {
      ++branch_flips;  // the gradient sits at the buildup threshold: a 1 % error flips the branch
      continue;
    }
    const double e = exact.incast_threshold(2, view);
    error += std::abs(approx.incast_threshold(2, view) - e) / e;
    ++compared;
  }
  EXPECT_LT(error / compared, 0.01);
  EXPECT_LT(branch_flips, steps / 100);
}

TEST_F(ProteanFixture, TofinoArithmeticNeedsABetaThatIsAPowerOfTwo) {
  Params p;
  p.values = {{"arithmetic", "tofino"}, {"beta", 0.3}};
  EXPECT_THROW(ProteanPolicy(p, env), ConfigError);
  p.values = {{"arithmetic", "tofino"}, {"beta", 0.125}};
  EXPECT_NO_THROW(ProteanPolicy(p, env));
}

// The incast role goes through admit(): a queue whose gradient is above buildup is held to
// g * alpha_incast * Rem, one below it to alpha_incast * Rem; a class alpha rescales both.
TEST_F(ProteanFixture, IncastRoleAdmitsUpToTheGradientScaledThreshold) {
  Params params;
  params.values = {{"beta", 1.0}, {"alpha_incast", 0.5}};
  PolicyEnv e = env;
  e.classes.push_back(TrafficClass{.name = "incast2", .alpha = 1.0, .role = ProteanRole::kIncast});
  ProteanPolicy p(params, e);
  p.on_dequeue({.now_ns = 1'000'000, .queue = 2}, view);
  set_queue(2, 2000);  // 2000 cells in 100 us = 12.8 x line rate
  p.on_dequeue({.now_ns = 1'100'000, .queue = 2}, view);
  ASSERT_NEAR(p.gradient(2), 12.8, 1e-9);
  // thr = 12.8 * 0.5 * 8000 = 51200 > B: the queue may take all that is left.
  set_queue(2, 7000);  // Rem = 3000, DT's 0.5 * Rem would be 1500
  EXPECT_TRUE(p.admit({.queue = 2, .class_id = 2, .cells = 1}, view).accepted());
  // Below buildup the same queue is DT: 7000 >= 0.5 * 3000.
  p.on_dequeue({.now_ns = 2'100'000, .queue = 2}, view);  // 5000 cells in 1 ms: g = 3.2
  p.on_dequeue({.now_ns = 3'100'000, .queue = 2}, view);  // unchanged: g = 0
  ASSERT_NEAR(p.gradient(2), 0, 1e-12);
  EXPECT_NEAR(p.incast_threshold(2, view), 0.5 * 3000, 1e-9);
  EXPECT_FALSE(p.admit({.queue = 2, .class_id = 2, .cells = 1}, view).accepted());
  set_queue(2, 1000);  // Rem 9000: thr (computed at 3000) 1500 > 1000
  EXPECT_TRUE(p.admit({.queue = 2, .class_id = 2, .cells = 1}, view).accepted());
  // A class alpha of 1 doubles the threshold of the same queue: 2 * 1500 = 3000.
  set_queue(2, 2500);
  EXPECT_FALSE(p.admit({.queue = 2, .class_id = 2, .cells = 1}, view).accepted());
  EXPECT_TRUE(p.admit({.queue = 2, .class_id = 3, .cells = 1}, view).accepted());
}

// A queue whose last dequeue saw Rem = 0 got thr = 0; with no dequeue to come while it is empty,
// it must not stay locked out: an empty queue is held to alpha_incast * Rem with today's Rem.
TEST_F(ProteanFixture, AnEmptyQueueIsNeverLockedOutByAZeroThreshold) {
  for (const char* arithmetic : {"exact", "tofino"}) {
    Params params;
    params.values = {{"arithmetic", arithmetic}};
    ProteanPolicy p(params, env);
    set_queue(0, 10000);  // the buffer is full when queue 2's last frame departs
    p.on_dequeue({.now_ns = 1'000'000, .queue = 2}, view);
    EXPECT_DOUBLE_EQ(p.incast_threshold(2, view), 0) << arithmetic;
    set_queue(0, 5000);  // room again, and queue 2 is empty
    EXPECT_TRUE(p.admit({.queue = 2, .class_id = 2, .cells = 1}, view).accepted()) << arithmetic;
    // alpha_incast x Rem: exact, or within the tables' 1 % (tofino).
    EXPECT_NEAR(p.incast_threshold(2, view), 5000, std::string(arithmetic) == "exact" ? 0 : 50)
        << arithmetic;
    set_queue(0, 0);
  }
}

}  // namespace
}  // namespace sharebuf::policies

// DT against its analysis (Choudhury & Hahne): S queues saturated at the same alpha each settle at
// alpha * B / (1 + alpha * S). These tests use the papers' threshold form, Q[q] < alpha * Rem with
// Q taken before the frame, which is what DtPolicy implements.
#include "policies/dt.h"

#include <cmath>
#include <tuple>

#include <gtest/gtest.h>

#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

constexpr uint32_t kB = 10000;

class DtSteadyState : public testing::PolicyHarness,
                      public ::testing::WithParamInterface<std::tuple<uint32_t, double, uint32_t>> {
 protected:
  void SetUp() override {
    const auto [queues, alpha, cells] = GetParam();
    (void)queues;
    (void)cells;
    build({.capacity_cells = kB, .ports = {buffer::PortSpec{.num_queues = 8}}}, "dt",
          {{"alpha", alpha}});
  }
  static double expected(uint32_t s, double alpha) { return alpha * kB / (1 + alpha * s); }
};

// Filling from empty: frames arrive round robin at S queues until none accepts one more.
TEST_P(DtSteadyState, SaturatedQueuesSettleAtTheAnalyticShare) {
  const auto [s, alpha, cells] = GetParam();
  bool any = true;
  while (any) {
    any = false;
    for (uint32_t q = 0; q < s; ++q)
      any = offer(q, cells) || any;
  }
  const double target = expected(s, alpha);
  for (uint32_t q = 0; q < s; ++q) {
    EXPECT_NEAR(occupancy(q), target, cells) << "queue " << q << " of " << s;
  }
  for (uint32_t q = s; q < 8; ++q)
    EXPECT_EQ(occupancy(q), 0u);
  EXPECT_EQ(last_.reason, buffer::DropReason::kThreshold);
}

// Saturated with departures: after filling, every round each queue loses one frame and is
// offered two (interleaved, with the first queue rotating so no queue is always served first),
// so arrivals outpace the egress. Right after the arrivals the occupancy sits at the analytic
// share within one frame, round after round.
TEST_P(DtSteadyState, HoldsTheShareUnderDepartures) {
  const auto [s, alpha, cells] = GetParam();
  const double target = expected(s, alpha);
  for (bool any = true; any;) {
    any = false;
    for (uint32_t q = 0; q < s; ++q)
      any = offer(q, cells) || any;
  }
  for (uint32_t round = 0; round < 1000; ++round) {
    for (uint32_t q = 0; q < s; ++q)
      depart(q);
    for (int pass = 0; pass < 2; ++pass) {
      for (uint32_t i = 0; i < s; ++i)
        offer((i + round) % s, cells);
    }
    for (uint32_t q = 0; q < s; ++q) {
      ASSERT_NEAR(occupancy(q), target, cells) << "queue " << q << " round " << round;
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<DtSteadyState::ParamType>& param) {
  const uint32_t s = std::get<0>(param.param);
  const double alpha = std::get<1>(param.param);
  const uint32_t cells = std::get<2>(param.param);
  return "S" + std::to_string(s) + "_alpha" + std::to_string(static_cast<int>(alpha * 10)) +
         "tenths_" + std::to_string(cells) + "cells";
}

INSTANTIATE_TEST_SUITE_P(SAndAlpha, DtSteadyState,
                         ::testing::Combine(::testing::Range(1u, 9u),
                                            ::testing::Values(0.5, 1.0, 2.0),
                                            ::testing::Values(1u, 4u)),
                         case_name);

// One queue alone takes alpha / (1 + alpha) of the buffer.
TEST(DtThreshold, ClassAlphaOverridesPolicyAlpha) {
  const buffer::BufferLayout layout(1000, 80, {buffer::PortSpec{.num_queues = 2}});
  PolicyEnv env{.layout = &layout,
                .classes = {TrafficClass{.name = "a"}, TrafficClass{.name = "b", .alpha = 4.0}}};
  Params params;
  params.values = {{"alpha", 0.5}};
  DtPolicy dt(params, env);
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  ASSERT_TRUE(state.try_reserve(0, 300));
  // Rem = 700: class 0 threshold 350, class 1 threshold 2800 (capped to B when reported).
  EXPECT_TRUE(dt.admit({.queue = 0, .class_id = 0, .cells = 1}, view).accepted());
  ASSERT_TRUE(state.try_reserve(0, 50));  // Q = 350, Rem = 650: class 0 now at 325
  EXPECT_EQ(dt.admit({.queue = 0, .class_id = 0, .cells = 1}, view),
            Verdict::drop(buffer::DropReason::kThreshold));
  EXPECT_TRUE(dt.admit({.queue = 0, .class_id = 1, .cells = 1}, view).accepted());
  EXPECT_EQ(dt.threshold_cells(0, 0, view), 325u);
  EXPECT_EQ(dt.threshold_cells(0, 1, view), 1000u);
  const auto d = dt.describe(view);
  EXPECT_EQ(d["state"]["class_alpha"][1], 4.0);
  state.release(0, 350);
}

// The boundary is strict: Q == T is refused (papers' form), Q == T - 1 accepted.
TEST(DtThreshold, StrictLessThanAtTheBoundary) {
  const buffer::BufferLayout layout(300, 80, {buffer::PortSpec{.num_queues = 2}});
  PolicyEnv env{.layout = &layout};
  DtPolicy dt(Params{}, env);
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  ASSERT_TRUE(state.try_reserve(0, 100));
  ASSERT_TRUE(state.try_reserve(1, 100));                             // Rem = 100
  EXPECT_FALSE(dt.admit({.queue = 0, .cells = 1}, view).accepted());  // Q = 100 = T
  state.release(1, 1);  // Rem = 101, T = 101 > Q = 100
  EXPECT_TRUE(dt.admit({.queue = 0, .cells = 1}, view).accepted());
  state.release(0, 100);
  state.release(1, 99);
}

}  // namespace
}  // namespace sharebuf::policies

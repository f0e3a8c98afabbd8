// FB against the paper's analysis: the per-priority and total occupancy stay under their bounds
// however many low-priority queues congest, and the high-priority queue keeps its share (the
// contrast of the paper's Fig. 3 with Fig. 5a, where DT fails). Papers' threshold form Q < T.
#include "policies/fb.h"

#include <gtest/gtest.h>

#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

constexpr uint32_t kB = 20000;
constexpr double kAlphaHigh = 1.0;
constexpr double kAlphaLow = 0.5;

struct Fill {
  double low_total = 0;
  double high = 0;
  double total = 0;
};

class FbBounds : public testing::PolicyHarness {
 protected:
  // Port 0 queue 0: the high-priority queue. Ports 1..n, queue 1: congested low-priority queues.
  Fill fill(const std::string& policy, uint32_t n_low) {
    std::vector<buffer::PortSpec> ports(
        33, buffer::PortSpec{
                .num_queues = 2,
                .queue_groups = {buffer::PriorityGroup::kHigh, buffer::PriorityGroup::kLow}});
    std::vector<TrafficClass> classes = {
        TrafficClass{.name = "high", .alpha = kAlphaHigh, .group = PriorityGroup::kHigh},
        TrafficClass{.name = "low", .alpha = kAlphaLow, .group = PriorityGroup::kLow}};
    build({.capacity_cells = kB, .ports = ports}, policy, nlohmann::json::object(), classes);
    const auto& layout = buffer_->layout();
    std::vector<uint32_t> queues = {layout.queue_id(0, 0)};
    for (uint32_t p = 1; p <= n_low; ++p)
      queues.push_back(layout.queue_id(p, 1));
    auto round = [&](uint32_t r) {
      // Every queue is offered two frames per departure (saturated), interleaved, with the first
      // queue rotating so that no queue is always served first.
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < queues.size(); ++i) {
          const size_t k = (i + r) % queues.size();
          offer(queues[k], 1, k == 0 ? 0 : 1);
        }
      }
    };
    // Without departures a queue keeps what it won while Rem was large, so the buffer is driven
    // to its steady state by departures: every round each queue loses one frame.
    for (bool any = true; any;) {
      any = false;
      for (size_t k = 0; k < queues.size(); ++k)
        any = offer(queues[k], 1, k == 0 ? 0 : 1) || any;
    }
    Fill f;
    for (uint32_t r = 0; r < 10000; ++r) {
      for (uint32_t q : queues)
        depart(q);
      round(r);
      f.high = occupancy(queues[0]);
      f.low_total = 0;
      for (size_t i = 1; i < queues.size(); ++i)
        f.low_total += occupancy(queues[i]);
      f.total = buffer_->state().total_cells();
    }
    TearDown();
    buffer_.reset();
    return f;
  }
};

TEST_F(FbBounds, LowGroupAndTotalStayBoundedForAnyNumberOfCongestedQueues) {
  const double low_bound = kAlphaLow / (1 + kAlphaLow) * kB;
  const double total_bound = kB * (kAlphaLow + kAlphaHigh) / (1 + kAlphaLow + kAlphaHigh);
  double high_at_1 = 0;
  for (uint32_t n : {1u, 2u, 4u, 8u, 16u, 32u}) {
    const Fill f = fill("fb", n);
    EXPECT_LE(f.low_total, low_bound + n) << n << " low queues";  // + one frame per queue
    EXPECT_LE(f.total, total_bound + n + 1) << n << " low queues";
    if (n == 1) high_at_1 = f.high;
    // The high-priority queue's share does not depend on how many low queues congest.
    EXPECT_NEAR(f.high, high_at_1, 0.02 * high_at_1) << n << " low queues";
  }
}

TEST_F(FbBounds, DtLetsLowQueuesCrowdOutTheHighQueue) {
  const Fill one = fill("dt", 1);
  const Fill many = fill("dt", 32);
  EXPECT_LT(many.high, 0.5 * one.high);  // the failure FB fixes
  EXPECT_GT(many.low_total, kAlphaLow / (1 + kAlphaLow) * kB);
}

TEST(FbFactors, NpCountsTheArrivingQueueAndGammaFollowsTheScheduler) {
  const buffer::BufferLayout layout(1000, 80, {buffer::PortSpec{.num_queues = 3}});
  PolicyEnv env{.layout = &layout};
  env.port_scheduling = {PortScheduling{.kind = SchedulingKind::kDrr, .weights = {1, 3, 4}}};
  FbPolicy fb(Params{}, env);
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  EXPECT_EQ(fb.n_p(0, 0, view), 1.0);
  EXPECT_EQ(fb.gamma(1, view), 1.0);  // alone on its port
  ASSERT_TRUE(state.try_reserve(0, 10));
  ASSERT_TRUE(state.try_reserve(2, 10));
  EXPECT_EQ(fb.n_p(0, 0, view), 2.0);  // two congested, q0 among them
  EXPECT_EQ(fb.n_p(1, 0, view), 3.0);  // q1 empty: the arrival makes it congested
  EXPECT_DOUBLE_EQ(fb.gamma(1, view), 3.0 / 8);
  EXPECT_DOUBLE_EQ(fb.gamma(0, view), 1.0 / 5);
  // T = alpha_low 0.5 * 1/3 * 3/8 * Rem 980
  EXPECT_EQ(fb.threshold_cells(1, 0, view),
            static_cast<uint32_t>(std::ceil(0.5 / 3 * 3 / 8 * 980)));
  const auto d = fb.describe(view);
  EXPECT_EQ(d["state"]["congested"]["low"], 2);
  state.release(0, 10);
  state.release(2, 10);
}

TEST(FbFactors, StrictPriorityAndRoundRobinShares) {
  const buffer::BufferLayout layout(1000, 80, {buffer::PortSpec{.num_queues = 3}});
  PolicyEnv env{.layout = &layout};
  env.port_scheduling = {PortScheduling{.kind = SchedulingKind::kStrictPriority}};
  FbPolicy sp(Params{}, env);
  env.port_scheduling = {PortScheduling{.kind = SchedulingKind::kRoundRobin}};
  FbPolicy rr(Params{}, env);
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  ASSERT_TRUE(state.try_reserve(1, 10));
  EXPECT_EQ(sp.gamma(0, view), 1.0);  // highest non-empty: all of the port
  EXPECT_EQ(sp.gamma(2, view), 0.5);  // below a busy queue: never 0 for the arrival
  EXPECT_EQ(rr.gamma(2, view), 0.5);
  state.release(1, 10);
}

// Single queue per port: gamma = 1, N_p counts every congested queue, and classes still get
// different thresholds through alpha.
TEST(FbFactors, SingleQueueMode) {
  const buffer::BufferLayout layout(1000, 80, std::vector<buffer::PortSpec>(3, buffer::PortSpec{}));
  PolicyEnv env{.layout = &layout,
                .classes = {TrafficClass{.name = "h", .group = PriorityGroup::kHigh},
                            TrafficClass{.name = "l", .group = PriorityGroup::kLow}}};
  FbPolicy fb(Params{}, env);
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  ASSERT_TRUE(state.try_reserve(0, 10));
  ASSERT_TRUE(state.try_reserve(1, 10));
  EXPECT_EQ(fb.gamma(2, view), 1.0);
  EXPECT_EQ(fb.n_p(2, 0, view), 3.0);
  EXPECT_GT(fb.threshold_cells(2, 0, view), fb.threshold_cells(2, 1, view));  // 20 vs 0.5
  state.release(0, 10);
  state.release(1, 10);
}

TEST(FbFactors, MeasuredGammaFollowsTheDequeueRate) {
  const buffer::BufferLayout layout(1000, 80, {buffer::PortSpec{.num_queues = 2}});
  PolicyEnv env{.layout = &layout, .port_rate_bps = {1'000'000'000}};
  Params p;
  p.values = {{"gamma", "measured"}, {"gamma_weight", 1.0}};
  FbPolicy fb(p, env);
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  ASSERT_TRUE(state.try_reserve(1, 10));
  EXPECT_EQ(fb.gamma(0, view), 0.5);  // no history: the share
  // One 19-cell frame every 24.32 us = 19 * 80 * 8 bits / 24.32 us = 0.5 Gbit/s: half the port.
  fb.on_dequeue({.now_ns = 1'000'000, .queue = 0, .cells = 19}, view);
  fb.on_dequeue({.now_ns = 1'024'320, .queue = 0, .cells = 19}, view);
  EXPECT_NEAR(fb.gamma(0, view), 0.5, 0.001);
  state.release(1, 10);
}

}  // namespace
}  // namespace sharebuf::policies

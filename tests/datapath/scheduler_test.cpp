#include "datapath/scheduler.h"

#include <deque>
#include <vector>

#include <gtest/gtest.h>

#include "datapath/token_bucket.h"

namespace sharebuf::datapath {
namespace {

// Queues of frame sizes; serve n frames and count bytes per queue.
std::vector<uint64_t> serve(Scheduler& s, std::vector<std::deque<uint32_t>>& queues, int n) {
  std::vector<uint64_t> bytes(queues.size(), 0);
  for (int i = 0; i < n; ++i) {
    const int q = s.pick([&](uint32_t k) { return queues[k].empty() ? 0u : queues[k].front(); });
    if (q == Scheduler::kNone) break;
    bytes[q] += queues[q].front();
    s.sent(q, queues[q].front());
    queues[q].pop_front();
  }
  return bytes;
}

TEST(Scheduler, StrictPriorityServesQueueZeroFirst) {
  Scheduler s(SchedulerKind::kStrictPriority, 3, {});
  std::vector<std::deque<uint32_t>> q = {{100, 100}, {100}, {100, 100}};
  EXPECT_EQ(serve(s, q, 2), (std::vector<uint64_t>{200, 0, 0}));
  EXPECT_EQ(serve(s, q, 2), (std::vector<uint64_t>{0, 100, 100}));
}

TEST(Scheduler, RoundRobinAlternates) {
  Scheduler s(SchedulerKind::kRoundRobin, 3, {});
  std::vector<std::deque<uint32_t>> q = {
      std::deque<uint32_t>(10, 1500), {}, std::deque<uint32_t>(10, 64)};
  EXPECT_EQ(serve(s, q, 6), (std::vector<uint64_t>{3 * 1500, 0, 3 * 64}));
  EXPECT_EQ(s.pick([](uint32_t) { return 0u; }), Scheduler::kNone);
}

// DRR shares bytes by weight whatever the frame sizes.
TEST(Scheduler, DrrSharesBytesByWeight) {
  Scheduler s(SchedulerKind::kDrr, 2, {1, 3});
  std::vector<std::deque<uint32_t>> q = {std::deque<uint32_t>(100000, 1500),
                                         std::deque<uint32_t>(100000, 200)};
  const auto bytes = serve(s, q, 60000);
  const double ratio = static_cast<double>(bytes[1]) / static_cast<double>(bytes[0]);
  EXPECT_NEAR(ratio, 3.0, 0.05);
}

TEST(Scheduler, ShareForFbGamma) {
  const Scheduler rr(SchedulerKind::kRoundRobin, 4, {});
  EXPECT_DOUBLE_EQ(rr.share(0, {true, true, false, false}), 0.5);
  EXPECT_DOUBLE_EQ(rr.share(2, {true, true, false, false}), 1.0 / 3);  // arriving queue counts
  const Scheduler drr(SchedulerKind::kDrr, 2, {1, 3});
  EXPECT_DOUBLE_EQ(drr.share(1, {true, true}), 0.75);
  const Scheduler sp(SchedulerKind::kStrictPriority, 3, {});
  EXPECT_DOUBLE_EQ(sp.share(0, {true, true, false}), 1.0);
  EXPECT_DOUBLE_EQ(sp.share(1, {true, true, false}), 0.5);
}

TEST(TokenBucket, HoldsTheRateOverSimulatedTime) {
  TokenBucket tb(100'000'000, 3000);  // 100 Mbit/s
  uint64_t now = 1'000'000;
  uint64_t sent = 0;
  const uint64_t start = now;
  while (now - start < 1'000'000'000) {  // one simulated second
    const uint64_t wait = tb.wait_ns(1500, now);
    if (wait == 0) {
      tb.consume(1500);
      sent += 1500;
    } else {
      now += wait;
    }
  }
  EXPECT_NEAR(static_cast<double>(sent) * 8, 100e6, 100e6 * 0.001);
}

TEST(TokenBucket, UnshapedNeverWaits) {
  TokenBucket tb;
  EXPECT_EQ(tb.wait_ns(9000, 1), 0u);
}

}  // namespace
}  // namespace sharebuf::datapath

#include "model/scheduler.h"

#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/token_bucket.h"

namespace sharebuf::model {
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

TEST(Scheduler, ActiveListDrrSharesBytesByWeight) {
  Scheduler s(SchedulerKind::kDrrActive, 2, {1, 3});
  std::vector<std::deque<uint32_t>> q = {std::deque<uint32_t>(100000, 1500),
                                         std::deque<uint32_t>(100000, 200)};
  const auto bytes = serve(s, q, 60000);
  const double ratio = static_cast<double>(bytes[1]) / static_cast<double>(bytes[0]);
  EXPECT_NEAR(ratio, 3.0, 0.05);
}

// Where the two DRRs part: queues 0 and 2 hold three 1500-byte frames each (A, C), queue 1 none;
// equal weights, so a quantum (1514 bytes) pays for one frame and leaves 14 bytes. After A1
// leaves, B1 arrives at queue 1. The cyclic DRR's visit moves on from queue 0 to queue 1 and
// sends B1 next; the active list puts queue 1 behind queue 2 (the list is 0, 2 when B1 arrives,
// and queue 0 goes to the tail after A1), so C1 and then A2 (queue 0 has 14 + 1514 bytes) leave
// before B1.
std::string order(SchedulerKind kind) {
  Scheduler s(kind, 3, {});
  std::vector<std::deque<std::string>> q = {{"A1", "A2", "A3"}, {}, {"C1", "C2", "C3"}};
  std::string out;
  for (int i = 0; i < 7; ++i) {
    const int k = s.pick([&](uint32_t j) { return q[j].empty() ? 0u : 1500u; });
    if (k == Scheduler::kNone) break;
    out += q[k].front() + " ";
    s.sent(k, 1500);
    q[k].pop_front();
    if (i == 0) q[1].push_back("B1");
  }
  return out;
}

TEST(Scheduler, CyclicAndActiveListDrrOrderANewQueueDifferently) {
  EXPECT_EQ(order(SchedulerKind::kDrr), "A1 B1 C1 A2 C2 A3 C3 ");
  EXPECT_EQ(order(SchedulerKind::kDrrActive), "A1 C1 A2 B1 C2 A3 C3 ");
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

// A sender that always wakes `late_ns` after the time the bucket asked for, like an egress
// thread on a loaded host; returns the bytes it sent in one simulated second.
uint64_t send_one_second_waking_late(TokenBucket& tb, uint64_t late_ns) {
  uint64_t now = 1'000'000;
  uint64_t sent = 0;
  const uint64_t start = now;
  while (now - start < 1'000'000'000) {
    const uint64_t wait = tb.wait_ns(1500, now);
    if (wait == 0) {
      tb.consume(1500);
      sent += 1500;
      continue;
    }
    tb.set_backlogged(true);  // the queue always holds frames
    now += wait + late_ns;
  }
  return sent;
}

TEST(TokenBucket, PlainBucketLosesTheCreditOfLateWakeUps) {
  TokenBucket tb(100'000'000, 3000);  // no catch-up: 2 ms late wake-ups forfeit most of it
  const double mbit = static_cast<double>(send_one_second_waking_late(tb, 2'000'000)) * 8 / 1e6;
  EXPECT_LT(mbit, 20.0);
  EXPECT_EQ(tb.take_caught_up_bytes(), 0u);
}

TEST(TokenBucket, BackloggedBucketKeepsTheRateDespiteLateWakeUps) {
  TokenBucket tb(100'000'000, 3000, 250'000);  // 20 ms of catch-up at 100 Mbit/s
  const double mbit = static_cast<double>(send_one_second_waking_late(tb, 2'000'000)) * 8 / 1e6;
  EXPECT_NEAR(mbit, 100.0, 0.5);
  // Each wake-up is 2 ms late: ~25 kB above the 3 kB depth was owed every time.
  EXPECT_GT(tb.take_caught_up_bytes(), 10'000'000u);
  EXPECT_EQ(tb.take_caught_up_bytes(), 0u);  // taken
}

TEST(TokenBucket, CatchUpIsBoundedAndAnIdlePortKeepsOnlyTheDepth) {
  TokenBucket tb(100'000'000, 3000, 250'000);
  tb.set_backlogged(true);
  // One second late while backlogged: 12.5 MB earned, 250 kB kept.
  EXPECT_EQ(tb.wait_ns(250'000, 1'000'000'000), 0u);
  EXPECT_GT(tb.wait_ns(250'001, 1'000'000'000), 0u);
  EXPECT_EQ(tb.take_caught_up_bytes(), 247'000u);
  // The queue empties: what is left above the depth is not kept.
  tb.set_backlogged(false);
  EXPECT_GT(tb.wait_ns(3001, 1'000'000'001), 0u);
  EXPECT_EQ(tb.wait_ns(3000, 2'000'000'000), 0u);
  EXPECT_GT(tb.wait_ns(3001, 2'000'000'000), 0u);
  EXPECT_EQ(tb.take_caught_up_bytes(), 0u);
}

TEST(TokenBucket, UnshapedNeverWaits) {
  TokenBucket tb;
  EXPECT_EQ(tb.wait_ns(9000, 1), 0u);
}

}  // namespace
}  // namespace sharebuf::model

// The per-frame departure clock: a burst sent in one call leaves at line-rate spacing, an idle
// port starts from now, a backlogged port woken late resumes where it stopped (within the lag
// its shaper allows), and an unshaped port carries the real time.
#include "model/departure_clock.h"

#include <gtest/gtest.h>

namespace sharebuf::model {
namespace {

constexpr uint64_t kUs = 1'000;

// 100 Mbit/s: a 1500-byte frame takes 120 us.
DepartureClock clock_100m(uint64_t max_lag_ns = 20'000 * kUs) {
  DepartureClock c;
  c.set_rate(100'000'000, max_lag_ns);
  return c;
}

TEST(DepartureClock, ABurstSentInOneCallLeavesAtLineRateSpacing) {
  DepartureClock c = clock_100m();
  const uint64_t now = 1'000 * kUs;
  for (uint64_t k = 1; k <= 10; ++k)
    EXPECT_EQ(c.depart(1500, 900 * kUs, now, false), now + k * 120 * kUs) << "frame " << k;
  // Mixed sizes: each adds its own serialisation time.
  EXPECT_EQ(c.depart(64, 900 * kUs, now, false), now + 1200 * kUs + 5'120);
}

TEST(DepartureClock, AnIdlePortStartsFromNow) {
  DepartureClock c = clock_100m();
  EXPECT_EQ(c.depart(1500, 0, 1'000 * kUs, false), 1'120 * kUs);
  // Long after that frame left: the port was idle, the next one starts when it is sent.
  EXPECT_EQ(c.depart(1500, 4'900 * kUs, 5'000 * kUs, false), 5'120 * kUs);
}

TEST(DepartureClock, ABackloggedPortWokenLateResumesWhereItStopped) {
  DepartureClock c = clock_100m();
  EXPECT_EQ(c.depart(1500, 0, 1'000 * kUs, false), 1'120 * kUs);
  // The egress thread wakes 3 ms late with frames queued since before then: on a hardware port
  // they would have left back to back from 1.12 ms.
  EXPECT_EQ(c.depart(1500, 500 * kUs, 4'120 * kUs, true), 1'240 * kUs);
  EXPECT_EQ(c.depart(1500, 500 * kUs, 4'120 * kUs, true), 1'360 * kUs);
  // ... but not before a frame arrived.
  EXPECT_EQ(c.depart(1500, 2'000 * kUs, 4'120 * kUs, true), 2'120 * kUs);
}

TEST(DepartureClock, TheLagIsBoundedByTheShapersCatchUp) {
  DepartureClock c = clock_100m(/*max_lag_ns=*/1'000 * kUs);
  EXPECT_EQ(c.depart(1500, 0, 1'000 * kUs, false), 1'120 * kUs);
  // 50 ms late: the shaper kept only 1 ms of credit, and the clock resumes 1 ms before now.
  EXPECT_EQ(c.depart(1500, 0, 51'120 * kUs, true), 50'240 * kUs);
}

TEST(DepartureClock, AnUnshapedPortCarriesTheRealTime) {
  DepartureClock c;
  c.set_rate(0, 0);
  EXPECT_TRUE(c.unshaped());
  EXPECT_EQ(c.depart(1500, 0, 7'000, false), 7'000u);
  EXPECT_EQ(c.depart(1500, 0, 7'250, true), 7'250u);
  EXPECT_EQ(c.depart(1500, 0, 7'100, false), 7'250u);  // never backwards
}

}  // namespace
}  // namespace sharebuf::model

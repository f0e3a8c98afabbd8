#include "datapath/storm_control.h"

#include <gtest/gtest.h>

namespace sharebuf::datapath {
namespace {

// Frames offered evenly at `offered_pps` for `seconds`; returns how many passed.
uint64_t passed(StormControl& storm, uint64_t offered_pps, double seconds) {
  const uint64_t gap = 1'000'000'000 / offered_pps;
  const uint64_t frames = static_cast<uint64_t>(static_cast<double>(offered_pps) * seconds);
  uint64_t now = 5'000'000'000, n = 0;
  for (uint64_t i = 0; i < frames; ++i, now += gap)
    n += storm.allow(now) ? 1 : 0;
  return n;
}

TEST(StormControl, OffByDefault) {
  StormControl storm;
  EXPECT_FALSE(storm.enabled());
}

TEST(StormControl, PassesTheConfiguredRateOfAStorm) {
  StormControl storm;
  storm.set_rate(1000);
  ASSERT_TRUE(storm.enabled());
  // A 100 kpps storm for 2 s: 2000 frames at the rate, plus the 50 frames of burst.
  const uint64_t n = passed(storm, 100'000, 2.0);
  EXPECT_GE(n, 2000u);
  EXPECT_LE(n, 2000u + 50u + 1u);
}

TEST(StormControl, TrafficBelowTheRateIsUntouched) {
  StormControl storm;
  storm.set_rate(1000);
  EXPECT_EQ(passed(storm, 500, 3.0), 1500u);
}

TEST(StormControl, ALowRateStillLetsAShortBurstThrough) {
  StormControl storm;
  storm.set_rate(10);  // burst: at least 8 frames
  uint64_t n = 0;
  for (int i = 0; i < 20; ++i)
    n += storm.allow(1'000'000'000 + static_cast<uint64_t>(i)) ? 1 : 0;
  EXPECT_EQ(n, 8u);
}

}  // namespace
}  // namespace sharebuf::datapath

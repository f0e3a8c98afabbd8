#include "datapath/hop_latency.h"

#include <gtest/gtest.h>

namespace sharebuf::datapath {
namespace {

TEST(HopLatency, RecordsTheTimeSinceTheRingStamp) {
  HopLatency lat;
  EXPECT_TRUE(lat.record_since_ring(HopLatency::kWakeup, 1'000'000'000, 1'000'040'000));
  EXPECT_EQ(lat.hops[HopLatency::kWakeup].count(), 1u);
  const uint64_t p50 = lat.hops[HopLatency::kWakeup].quantile(0.5);
  EXPECT_GT(p50, 35'000u);  // 40 us, within a bucket
  EXPECT_LT(p50, 45'000u);
  EXPECT_EQ(lat.hops[HopLatency::kRingToRx].count(), 0u);
}

// The ring stamp is CLOCK_REALTIME: a stepped clock must not become a frame's latency.
TEST(HopLatency, ImplausibleStampsAreLeftOut) {
  HopLatency lat;
  const uint64_t now = 1'800'000'000'000'000'000ull;
  EXPECT_FALSE(lat.record_since_ring(HopLatency::kRingToRx, 0, now));           // no stamp
  EXPECT_FALSE(lat.record_since_ring(HopLatency::kRingToRx, now + 1000, now));  // future
  EXPECT_FALSE(lat.record_since_ring(HopLatency::kRingToRx, now - 61'000'000'000ull, now));
  EXPECT_EQ(lat.hops[HopLatency::kRingToRx].count(), 0u);
  EXPECT_TRUE(lat.record_since_ring(HopLatency::kRingToRx, now - 59'000'000'000ull, now));
  EXPECT_TRUE(lat.record_since_ring(HopLatency::kRingToRx, now, now));
  EXPECT_EQ(lat.hops[HopLatency::kRingToRx].count(), 2u);
}

TEST(HopLatency, ResetEmptiesEveryHop) {
  HopLatency lat;
  for (int h = 0; h < HopLatency::kNumHops; ++h)
    lat.record(static_cast<HopLatency::Hop>(h), 100);
  lat.reset();
  for (int h = 0; h < HopLatency::kNumHops; ++h)
    EXPECT_EQ(lat.hops[h].count(), 0u) << HopLatency::kNames[static_cast<size_t>(h)];
}

}  // namespace
}  // namespace sharebuf::datapath

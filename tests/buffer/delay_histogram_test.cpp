#include "buffer/delay_histogram.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace sharebuf::buffer {
namespace {

TEST(DelayHistogram, BucketsAreContiguousAndOrdered) {
  for (int b = 0; b + 1 < 200; ++b) {
    ASSERT_LT(DelayHistogram::lower_bound(b), DelayHistogram::lower_bound(b + 1)) << b;
    ASSERT_EQ(DelayHistogram::bucket_of(DelayHistogram::lower_bound(b)), b) << b;
    ASSERT_EQ(DelayHistogram::bucket_of(DelayHistogram::lower_bound(b + 1) - 1), b) << b;
  }
  EXPECT_LT(DelayHistogram::bucket_of(UINT64_MAX), DelayHistogram::kBuckets);
}

TEST(DelayHistogram, QuantilesWithinABucketOfTheTruth) {
  DelayHistogram h;
  EXPECT_EQ(h.quantile(0.5), 0u);
  std::mt19937_64 rng(3);
  std::vector<uint64_t> values;
  for (int i = 0; i < 10000; ++i) {
    values.push_back(1000 + rng() % 1'000'000);  // 1 us .. 1 ms
    h.record(values.back());
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99}) {
    const double truth = static_cast<double>(values[static_cast<size_t>(q * 9999)]);
    EXPECT_NEAR(static_cast<double>(h.quantile(q)), truth, 0.13 * truth) << q;
  }
  EXPECT_EQ(h.count(), 10000u);
  h.reset();
  EXPECT_EQ(h.count(), 0u);
}

}  // namespace
}  // namespace sharebuf::buffer

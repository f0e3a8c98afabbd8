// The flow-size CDF the replay's websearch generator and sharebuf-tg draw from.
#include "common/flow_size_cdf.h"

#include <random>

#include <gtest/gtest.h>

namespace sharebuf::common {
namespace {

TEST(FlowSizeCdf, QuantilesFollowTheTable) {
  const FlowSizeCdf cdf =
      FlowSizeCdf::load(SHAREBUF_SOURCE_DIR "/data/websearch-flow-size-cdf.txt");
  // Points of the table are hit exactly, and between them the CDF is linear.
  EXPECT_EQ(cdf.quantile(0.7), 1'000'000u);
  EXPECT_EQ(cdf.quantile(0.8), 2'000'000u);
  EXPECT_EQ(cdf.quantile(0.75), 1'500'000u);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  int below_1mb = 0;
  for (int i = 0; i < 100000; ++i)
    below_1mb += cdf.quantile(u(rng)) <= 1'000'000;
  EXPECT_NEAR(below_1mb / 100000.0, 0.7, 0.01);
}

}  // namespace
}  // namespace sharebuf::common

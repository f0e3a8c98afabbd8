#include "common/units.h"

#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sharebuf::common {
namespace {

TEST(Units, Sizes) {
  EXPECT_EQ(parse_size_cells("21000 cells", 80), 21000u);
  EXPECT_EQ(parse_size_cells("21000", 80), 21000u);
  EXPECT_EQ(parse_size_cells("1.6MB", 80), 20000u);
  EXPECT_EQ(parse_size_cells("1.6 MB", 80), 20000u);
  EXPECT_EQ(parse_size_cells("81B", 80), 2u);  // rounded up to whole cells
  EXPECT_EQ(parse_size_cells("1KiB", 16), 64u);
  EXPECT_THAT(
      [] { parse_size_cells("12 parsecs", 80); },
      ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("unknown size unit")));
  EXPECT_THROW(parse_size_cells("2.5 cells", 80), std::invalid_argument);
  EXPECT_THROW(parse_size_cells("MB", 80), std::invalid_argument);
}

TEST(Units, Rates) {
  EXPECT_EQ(parse_rate_bps("100Mbit"), 100'000'000u);
  EXPECT_EQ(parse_rate_bps("1.5 Gbit/s"), 1'500'000'000u);
  EXPECT_EQ(parse_rate_bps("500kbit"), 500'000u);
  EXPECT_EQ(parse_rate_bps("100Mbps"), 100'000'000u);
  EXPECT_EQ(parse_rate_bps("64000"), 64'000u);
  EXPECT_THROW(parse_rate_bps("100 furlongs"), std::invalid_argument);
}

TEST(Units, Durations) {
  EXPECT_EQ(parse_duration_ns("10us"), 10'000u);
  EXPECT_EQ(parse_duration_ns("1.5ms"), 1'500'000u);
  EXPECT_EQ(parse_duration_ns("300s"), 300'000'000'000u);
  EXPECT_EQ(parse_duration_ns("250"), 250u);
  EXPECT_THROW(parse_duration_ns("3 fortnights"), std::invalid_argument);
}

// Past 2^63 a value has no exact conversion: refused, never saturated or wrapped.
TEST(Units, ValuesPastTwoToTheSixtyThreeAreRefused) {
  EXPECT_EQ(parse_duration_ns("9000000000000000000"), 9'000'000'000'000'000'000u);
  EXPECT_THAT(
      [] { parse_duration_ns("9223372036854775808"); },
      ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("out of range")));
  EXPECT_THROW(parse_duration_ns("10000000000s"), std::invalid_argument);
  EXPECT_THROW(parse_rate_bps("20000000000Gbit"), std::invalid_argument);
  EXPECT_THROW(parse_size_cells("99999999999999999999", 80), std::invalid_argument);
}

}  // namespace
}  // namespace sharebuf::common

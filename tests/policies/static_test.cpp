#include "policies/static.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

class StaticTest : public testing::PolicyHarness {};

TEST_F(StaticTest, DefaultCapIsAnEqualShare) {
  build({.capacity_cells = 1000, .ports = {buffer::PortSpec{.num_queues = 4}}}, "static");
  while (offer(0, 1)) {
  }
  EXPECT_EQ(occupancy(0), 250u);
  EXPECT_EQ(last_.reason, buffer::DropReason::kThreshold);
  // Other queues keep their share.
  while (offer(3, 1)) {
  }
  EXPECT_EQ(occupancy(3), 250u);
  EXPECT_EQ(policy_->params(), (nlohmann::json{{"cap_cells", 250}}));
}

// Q + c <= cap: a frame that would cross the cap is refused even if the queue is below it.
TEST_F(StaticTest, CapIncludesTheArrivingFrame) {
  build({.capacity_cells = 1000, .ports = {buffer::PortSpec{.num_queues = 2}}}, "static",
        {{"cap_cells", 100}});
  while (offer(0, 7)) {
  }
  EXPECT_EQ(occupancy(0), 98u);
  EXPECT_TRUE(offer(0, 2));
  EXPECT_EQ(occupancy(0), 100u);
  EXPECT_FALSE(offer(0, 1));
}

TEST_F(StaticTest, PerQueueCaps) {
  build({.capacity_cells = 1000, .ports = {buffer::PortSpec{.num_queues = 2}, buffer::PortSpec{}}},
        "static", {{"cap_cells", {10, 20, 30}}});
  for (uint32_t q = 0; q < 3; ++q) {
    while (offer(q, 1)) {
    }
    EXPECT_EQ(occupancy(q), 10u * (q + 1));
    EXPECT_EQ(policy_->threshold_cells(q, 0, buffer_->exact_view()), 10u * (q + 1));
  }
  EXPECT_EQ(policy_->params(), (nlohmann::json{{"cap_cells", {10, 20, 30}}}));
}

TEST_F(StaticTest, BadCapsNameTheKey) {
  const buffer::BufferLayout layout(1000, 80, {buffer::PortSpec{.num_queues = 2}});
  const PolicyEnv env{.layout = &layout};
  auto make = [&](nlohmann::json values) {
    Params p;
    p.values = std::move(values);
    p.origin = "test.toml [policy]";
    return StaticPolicy(p, env);
  };
  EXPECT_THAT(
      [&] {
        make({{"cap_cells", {1, 2, 3}}});
      },
      ::testing::ThrowsMessage<ConfigError>(::testing::AllOf(
          ::testing::HasSubstr("test.toml [policy]"), ::testing::HasSubstr("'cap_cells'"),
          ::testing::HasSubstr("3 caps for 2 queues"))));
  EXPECT_THAT(
      [&] {
        make({{"cap_cells", 2.5}});
      },
      ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("whole cells")));
  EXPECT_THAT(
      [&] {
        make({{"cap_cells", 5000}});
      },
      ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("between 1 and 1000")));
  EXPECT_THAT(
      [&] {
        make({{"cap", 5}});
      },
      ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("unknown key")));
}

}  // namespace
}  // namespace sharebuf::policies

#include "policies/cs.h"

#include <gtest/gtest.h>

#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

class CsTest : public testing::PolicyHarness {
 protected:
  void SetUp() override {
    build({.capacity_cells = 1000, .ports = {buffer::PortSpec{.num_queues = 4}}}, "cs");
  }
};

TEST_F(CsTest, OneQueueFillsToExactlyB) {
  uint32_t accepted = 0;
  while (offer(2, 1))
    ++accepted;
  EXPECT_EQ(accepted, 1000u);
  EXPECT_EQ(occupancy(2), 1000u);
  EXPECT_EQ(buffer_->state().total_cells(), 1000u);
  EXPECT_EQ(last_.reason, buffer::DropReason::kPoolFull);
}

TEST_F(CsTest, ManyQueuesFillToExactlyB) {
  for (int i = 0; i < 2000; ++i)
    offer(static_cast<uint32_t>(i % 4), 1);
  EXPECT_EQ(buffer_->state().total_cells(), 1000u);
  for (uint32_t q = 0; q < 4; ++q)
    EXPECT_EQ(occupancy(q), 250u);
}

// With multi-cell frames the buffer fills until less than one frame is left.
TEST_F(CsTest, MultiCellFramesStopWhenTheNextDoesNotFit) {
  while (offer(0, 7)) {
  }
  EXPECT_EQ(occupancy(0), 994u);
  EXPECT_TRUE(offer(1, 6));
  EXPECT_EQ(buffer_->state().total_cells(), 1000u);
  EXPECT_EQ(buffer_->stats(0).dropped(buffer::DropReason::kPoolFull), 1u);
}

TEST_F(CsTest, ThresholdIsWhatTheQueueCouldGrowTo) {
  offer(0, 100);
  EXPECT_EQ(policy_->threshold_cells(0, 0, buffer_->exact_view()), 1000u);
  EXPECT_EQ(policy_->threshold_cells(1, 0, buffer_->exact_view()), 900u);
}

}  // namespace
}  // namespace sharebuf::policies

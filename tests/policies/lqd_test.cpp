// LQD on hand-worked sequences: 1-cell frames into a 10-cell buffer.
#include "policies/lqd.h"

#include <gtest/gtest.h>

#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

class LqdTest : public testing::PolicyHarness {
 protected:
  void build_lqd(nlohmann::json params = nlohmann::json::object()) {
    build({.capacity_cells = 10, .ports = {buffer::PortSpec{.num_queues = 3}}}, "lqd", params);
  }
  void fill(uint32_t q, int frames, uint8_t tag = 0) {
    for (int i = 0; i < frames; ++i)
      ASSERT_TRUE(offer_tagged(q, tag));
  }
  bool offer_tagged(uint32_t q, uint8_t tag) {
    frame_.assign(80, std::byte{tag});
    const policies::ArrivalContext ctx{.queue = q, .cells = 1, .bytes = 80};
    last_ = model::admit_frame(*policy_, *buffer_, *cache_, buffer_->exact_view(), ctx, frame_, {});
    return last_.enqueued;
  }
  uint64_t pushed(uint32_t q) { return buffer_->stats(q).dropped(buffer::DropReason::kPushedOut); }
};

TEST_F(LqdTest, AcceptsWhileItFits) {
  build_lqd();
  fill(0, 10);
  EXPECT_EQ(occupancy(0), 10u);
  EXPECT_EQ(pushed(0), 0u);
}

TEST_F(LqdTest, FullBufferPushesOutFromTheLongestQueue) {
  build_lqd();
  fill(0, 6);
  fill(1, 4);
  EXPECT_TRUE(offer(2, 1));  // q0 (6) is the longest: it loses its tail
  EXPECT_EQ(occupancy(0), 5u);
  EXPECT_EQ(occupancy(2), 1u);
  EXPECT_EQ(pushed(0), 1u);
  EXPECT_EQ(last_.pushed_out_cells, 1u);
}

TEST_F(LqdTest, ArrivalAtTheLongestQueueIsDropped) {
  build_lqd();
  fill(0, 6);
  fill(1, 4);
  EXPECT_FALSE(offer(0, 1));
  EXPECT_EQ(last_.reason, buffer::DropReason::kPoolFull);
  EXPECT_EQ(occupancy(0), 6u);
}

TEST_F(LqdTest, TiesKeepTheArrivalsQueueAsTheLongest) {
  build_lqd();
  fill(0, 5);
  fill(1, 5);
  EXPECT_FALSE(offer(1, 1));  // q1 ties q0 for longest: the arrival is dropped
  EXPECT_TRUE(offer(2, 1));   // q2 is shorter: the longest with the lowest index, q0, pays
  EXPECT_EQ(occupancy(0), 4u);
  EXPECT_EQ(occupancy(1), 5u);
}

TEST_F(LqdTest, PushOutFromTheHeadEvictsTheOldest) {
  build_lqd({{"push_out", "head"}});
  for (uint8_t i = 0; i < 10; ++i)
    ASSERT_TRUE(offer_tagged(0, i));
  EXPECT_TRUE(offer(1, 1));
  std::vector<std::byte> out(80);
  ASSERT_EQ(buffer_->dequeue_copy(*cache_, 0, out), 80u);
  EXPECT_EQ(out[0], std::byte{1});  // frame 0 was pushed out
  EXPECT_EQ(policy_->params()["push_out"], "head");
}

TEST_F(LqdTest, TailIsTheDefault) {
  build_lqd();
  for (uint8_t i = 0; i < 10; ++i)
    ASSERT_TRUE(offer_tagged(0, i));
  EXPECT_TRUE(offer(1, 1));
  std::vector<std::byte> out(80);
  for (uint8_t i = 0; i < 9; ++i) {
    ASSERT_EQ(buffer_->dequeue_copy(*cache_, 0, out), 80u);
    EXPECT_EQ(out[0], std::byte{i});  // frames 0..8 remain, frame 9 was pushed out
  }
}

}  // namespace
}  // namespace sharebuf::policies

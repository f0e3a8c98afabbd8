#include "buffer/buffer_state.h"

#include <gtest/gtest.h>

namespace sharebuf::buffer {
namespace {

BufferLayout two_ports() {
  return BufferLayout(
      100, 80,
      {PortSpec{.num_queues = 2, .queue_groups = {PriorityGroup::kHigh, PriorityGroup::kLow}},
       PortSpec{.num_queues = 1}});
}

TEST(BufferState, ReservesUpToExactlyBAndNoFurther) {
  const BufferLayout layout = two_ports();
  BufferState state(layout);
  EXPECT_TRUE(state.try_reserve(0, 60));
  EXPECT_TRUE(state.try_reserve(2, 40));
  EXPECT_EQ(state.total_cells(), 100u);
  EXPECT_EQ(state.free_cells(), 0u);
  EXPECT_FALSE(state.try_reserve(1, 1));
  // A refused reservation changes nothing.
  EXPECT_EQ(state.queue_cells(1), 0u);
  EXPECT_EQ(state.total_cells(), 100u);
  state.release(0, 60);
  state.release(2, 40);
  EXPECT_EQ(state.total_cells(), 0u);
}

// The header reserve is set aside from B at once (counted outside the queues, so every policy's
// free space shrinks by it); a header takes its port's reserve into its queue without moving the
// total, and gives it back to that port, not to the pool.
TEST(BufferState, HeaderReserveIsOutsideTheQueuesUntilAHeaderTakesIt) {
  const BufferLayout layout = two_ports();
  BufferState state(layout);
  EXPECT_FALSE(state.set_header_reserve(51)) << "2 ports x 51 cells exceed B = 100";
  EXPECT_EQ(state.total_cells(), 0u);
  ASSERT_TRUE(state.set_header_reserve(5));
  EXPECT_EQ(state.total_cells(), 10u);
  EXPECT_EQ(state.outside_cells(), 10u);
  EXPECT_EQ(state.free_cells(), 90u);
  EXPECT_TRUE(state.take_header_cells(1, 3));
  EXPECT_FALSE(state.take_header_cells(0, 3)) << "port 0 has 2 reserve cells left";
  EXPECT_TRUE(state.take_header_cells(2, 5)) << "port 1's reserve is its own";
  EXPECT_EQ(state.total_cells(), 10u);
  EXPECT_EQ(state.queue_cells(1), 3u);
  EXPECT_EQ(state.port_cells(1), 5u);
  EXPECT_EQ(state.outside_cells(), 2u);
  EXPECT_EQ(state.header_free_cells(0), 2u);
  EXPECT_EQ(state.header_free_cells(1), 0u);
  state.return_header_cells(1, 3);
  EXPECT_EQ(state.queue_cells(1), 0u);
  EXPECT_EQ(state.header_free_cells(0), 5u);
  EXPECT_EQ(state.free_cells(), 90u) << "returned to the reserve, not to the pool";
}

TEST(BufferState, PortGroupAndActiveCounts) {
  const BufferLayout layout = two_ports();
  BufferState state(layout);
  ASSERT_TRUE(state.try_reserve(0, 5));
  ASSERT_TRUE(state.try_reserve(1, 7));
  ASSERT_TRUE(state.try_reserve(2, 11));
  ASSERT_TRUE(state.try_reserve(2, 1));
  EXPECT_EQ(state.port_cells(0), 12u);
  EXPECT_EQ(state.port_cells(1), 12u);
  EXPECT_EQ(state.group_cells(PriorityGroup::kHigh), 5u);
  EXPECT_EQ(state.group_cells(PriorityGroup::kLow), 19u);
  EXPECT_EQ(state.live().active_in_group[0].load(), 2);  // queues 1 and 2 are low
  EXPECT_EQ(state.live().active_in_group[1].load(), 1);
  EXPECT_EQ(state.live().active_on_port[0].load(), 2);
  state.release(1, 7);
  EXPECT_EQ(state.live().active_in_group[0].load(), 1);
  EXPECT_EQ(state.live().active_on_port[0].load(), 1);
  state.release(0, 5);
  state.release(2, 12);
  EXPECT_EQ(state.live().active_on_port[1].load(), 0);
}

// Three queues in 100 cells: the fair share B/N is ceil(33.3) = 34 cells.
TEST(BufferState, CountsQueuesAtOrAboveTheFairShare) {
  const BufferLayout layout = two_ports();
  BufferState state(layout);
  EXPECT_EQ(state.fair_share_cells(), 34u);
  const auto long_queues = [&] { return state.live().long_queues.load(); };
  ASSERT_TRUE(state.try_reserve(0, 33));
  EXPECT_EQ(long_queues(), 0);
  ASSERT_TRUE(state.try_reserve(0, 1));  // 34: at the share
  EXPECT_EQ(long_queues(), 1);
  ASSERT_TRUE(state.try_reserve(0, 10));  // still one long queue
  ASSERT_TRUE(state.try_reserve(2, 50));  // jumps over the share in one frame
  EXPECT_EQ(long_queues(), 2);
  state.release(0, 10);
  EXPECT_EQ(long_queues(), 2);
  state.release(0, 1);  // 33
  EXPECT_EQ(long_queues(), 1);
  state.release(2, 50);
  state.release(0, 33);
  EXPECT_EQ(long_queues(), 0);
}

TEST(BufferState, PeaksTrackMaximaAndReset) {
  const BufferLayout layout = two_ports();
  BufferState state(layout);
  ASSERT_TRUE(state.try_reserve(0, 30));
  ASSERT_TRUE(state.try_reserve(0, 20));
  state.release(0, 45);
  ASSERT_TRUE(state.try_reserve(2, 10));
  EXPECT_EQ(state.peak_queue_cells(0), 50u);
  EXPECT_EQ(state.peak_total_cells(), 50u);
  EXPECT_EQ(state.peak_port_cells(1), 10u);
  EXPECT_EQ(state.peak_group_cells(PriorityGroup::kHigh), 50u);
  state.reset_peaks();
  EXPECT_EQ(state.peak_queue_cells(0), 5u);
  EXPECT_EQ(state.peak_total_cells(), 15u);
  state.release(0, 5);
  state.release(2, 10);
}

}  // namespace
}  // namespace sharebuf::buffer

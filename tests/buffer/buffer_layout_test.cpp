#include "buffer/buffer_layout.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace sharebuf::buffer {
namespace {

TEST(BufferLayout, FlatQueueNumbering) {
  BufferLayout layout(
      1000, 80,
      {PortSpec{.num_queues = 2},
       PortSpec{.num_queues = 3,
                .queue_groups = {PriorityGroup::kHigh, PriorityGroup::kLow, PriorityGroup::kLow}}});
  EXPECT_EQ(layout.num_ports(), 2u);
  EXPECT_EQ(layout.num_queues(), 5u);
  EXPECT_EQ(layout.queue_id(1, 0), 2u);
  EXPECT_EQ(layout.port_of(4), 1u);
  EXPECT_EQ(layout.queues_on_port(1), 3u);
  EXPECT_EQ(layout.group_of(2), PriorityGroup::kHigh);
  EXPECT_EQ(layout.group_of(0), PriorityGroup::kLow);
}

TEST(BufferLayout, CellsRoundUp) {
  BufferLayout layout(1000, 80, {PortSpec{}});
  EXPECT_EQ(layout.cells_for(1), 1u);
  EXPECT_EQ(layout.cells_for(80), 1u);
  EXPECT_EQ(layout.cells_for(81), 2u);
  EXPECT_EQ(layout.cells_for(1500), 19u);
  EXPECT_EQ(layout.cells_for(0), 1u);
  EXPECT_EQ(layout.max_frame_cells(), 116u);
}

TEST(BufferLayout, RejectsNonsense) {
  EXPECT_THROW(BufferLayout(0, 80, {PortSpec{}}), std::invalid_argument);
  EXPECT_THROW(BufferLayout(100, 4, {PortSpec{}}), std::invalid_argument);
  EXPECT_THROW(BufferLayout(100, 80, {}), std::invalid_argument);
  EXPECT_THROW(BufferLayout(100, 80, {PortSpec{.num_queues = 0}}), std::invalid_argument);
  EXPECT_THROW(
      BufferLayout(100, 80, {PortSpec{.num_queues = 2, .queue_groups = {PriorityGroup::kHigh}}}),
      std::invalid_argument);
}

}  // namespace
}  // namespace sharebuf::buffer

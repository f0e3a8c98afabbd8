#include "buffer/shared_buffer.h"

#include <chrono>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fixtures/buffer_fixture.h"

namespace sharebuf::buffer {
namespace {

class SharedBufferTest : public testing::BufferFixture {
 protected:
  void SetUp() override {
    make_buffer({.capacity_cells = 100, .ports = {PortSpec{.num_queues = 2}, PortSpec{}}});
  }
  // Counts the arrival like the admission step does, then enqueues.
  bool arrive(uint32_t q, uint32_t bytes, uint8_t tag = 0) {
    std::vector<std::byte> frame(bytes, std::byte{tag});
    buffer_->count_arrival(q);
    if (buffer_->enqueue(*cache_, q, frame, FrameMeta{.arrival_ns = 7, .class_id = 3})) return true;
    buffer_->count_drop(q, DropReason::kPoolFull, buffer_->layout().cells_for(bytes));
    return false;
  }
};

TEST_F(SharedBufferTest, EnqueueDequeueRoundTrip) {
  ASSERT_TRUE(arrive(0, 1500, 0xab));
  EXPECT_EQ(buffer_->state().queue_cells(0), 19u);
  std::vector<std::byte> out(2000);
  PacketDescriptor d;
  EXPECT_EQ(buffer_->dequeue_copy(*cache_, 0, out, &d), 1500u);
  EXPECT_EQ(out[1499], std::byte{0xab});
  EXPECT_EQ(d.arrival_ns, 7u);
  EXPECT_EQ(d.class_id, 3u);
  EXPECT_EQ(d.queue, 0u);
  EXPECT_EQ(buffer_->state().queue_cells(0), 0u);
  EXPECT_EQ(buffer_->stats(0).dequeued_bytes.load(), 1500u);
  EXPECT_EQ(buffer_->dequeue_copy(*cache_, 0, out), 0u);
}

TEST_F(SharedBufferTest, PoolFullChangesNothing) {
  ASSERT_TRUE(arrive(0, 80 * 60));
  ASSERT_TRUE(arrive(2, 80 * 40));
  EXPECT_FALSE(arrive(1, 1));
  EXPECT_EQ(buffer_->state().queue_cells(1), 0u);
  EXPECT_EQ(buffer_->stats(1).dropped(DropReason::kPoolFull), 1u);
  EXPECT_EQ(buffer_->pool().physical_cells() - buffer_->pool().free_cells_approx(), 100u);
}

TEST_F(SharedBufferTest, PushOutFromTailAndHeadIsCountedAsPushedOut) {
  for (uint8_t i = 0; i < 4; ++i)
    ASSERT_TRUE(arrive(0, 160, i));  // 2 cells each
  EXPECT_EQ(buffer_->push_out(*cache_, 0, /*from_head=*/false), 2u);
  EXPECT_EQ(buffer_->push_out(*cache_, 0, /*from_head=*/true), 2u);
  EXPECT_EQ(buffer_->push_out(*cache_, 1, false), 0u);  // empty queue
  EXPECT_EQ(buffer_->stats(0).dropped(DropReason::kPushedOut), 2u);
  EXPECT_EQ(buffer_->state().queue_cells(0), 4u);
  std::vector<std::byte> out(200);
  ASSERT_EQ(buffer_->dequeue_copy(*cache_, 0, out), 160u);
  EXPECT_EQ(out[0], std::byte{1});  // frames 0 (head) and 3 (tail) were pushed out
  ASSERT_EQ(buffer_->dequeue_copy(*cache_, 0, out), 160u);
  EXPECT_EQ(out[0], std::byte{2});
}

// Push-outs hand copies of their victims to the caller (trimming pushed-out frames): bytes,
// queue, class; a recorder without room skips a frame rather than allocate.
TEST_F(SharedBufferTest, PushOutRecordsTheEvictedFrames) {
  ASSERT_TRUE(arrive(0, 160, 0x11));
  ASSERT_TRUE(arrive(0, 240, 0x22));
  EvictedFrames evicted;
  evicted.reserve(1000, 4);
  EXPECT_EQ(buffer_->push_out(*cache_, 0, /*from_head=*/false, &evicted), 3u);
  ASSERT_EQ(evicted.frames.size(), 1u);
  const EvictedFrames::Frame& f = evicted.frames[0];
  EXPECT_EQ(f.desc.bytes, 240u);
  EXPECT_EQ(f.desc.queue, 0u);
  EXPECT_EQ(f.desc.class_id, 3u);
  ASSERT_EQ(evicted.frame_bytes(f).size(), 240u);
  EXPECT_EQ(evicted.frame_bytes(f)[239], std::byte{0x22});
  EvictedFrames full;
  full.reserve(100, 4);  // less than the 160-byte frame
  EXPECT_EQ(buffer_->push_out(*cache_, 0, false, &full), 2u);
  EXPECT_TRUE(full.frames.empty());
  EXPECT_EQ(full.skipped, 1u);
}

// make_room() when an egress worker sends a planned victim between planning and eviction: the
// picker below plays that egress worker, dequeuing (and holding) the first victim's frame while
// the plan goes on. The shortfall is planned again from the queues still longer than the
// arrival's, so the arrival that pushed frames out is kept (it was refused after 5 ms of waiting
// for cells that the held frame never returned).
class MakeRoomRace : public testing::BufferFixture {
 protected:
  static inline SharedBuffer* buffer_for_picker = nullptr;
  static inline uint32_t picks = 0;
  static inline uint32_t held_by_egress = kNoCell;
  static inline uint32_t steal_at = 2;
  // A 150-cell buffer of 16-byte cells, one port of 4 queues; the egress worker steals on the
  // picker's second call.
  void SetUp() override {
    make_buffer({.capacity_cells = 150, .cell_bytes = 16, .ports = {PortSpec{.num_queues = 4}}});
    buffer_for_picker = buffer_.get();
    picks = 0;
    held_by_egress = kNoCell;
    steal_at = 2;
  }
  void put(uint32_t q, uint32_t bytes) {
    std::vector<std::byte> frame(bytes);
    buffer_->count_arrival(q);
    ASSERT_TRUE(buffer_->enqueue(*cache_, q, frame, FrameMeta{}));
  }
  // LQD's rule (the longest other queue with a frame, ties to the lowest id, refusing when the
  // arrival's queue is as long), with a theft of queue 1's head on call number steal_at.
  static uint32_t racing_pick(uint32_t q, std::span<const uint32_t> cells,
                              std::span<const uint8_t> has_frame) noexcept {
    if (++picks == steal_at) held_by_egress = buffer_for_picker->dequeue(1);
    uint32_t victim = static_cast<uint32_t>(cells.size());
    uint32_t longest = cells[q];
    for (uint32_t j = 0; j < cells.size(); ++j) {
      if (j != q && cells[j] > longest && has_frame[j] != 0) {
        victim = j;
        longest = cells[j];
      }
    }
    return victim;
  }
};

TEST_F(MakeRoomRace, AVictimSentMeanwhileIsReplacedFromTheQueuesStillLonger) {
  put(1, 800);  // 50 cells, one frame: the first victim
  put(2, 400);  // 2 x 25 cells
  put(2, 400);
  put(3, 400);  // 2 x 25 cells
  put(3, 400);
  ASSERT_EQ(buffer_->state().total_cells(), 150u);

  // A 1500-byte arrival (94 cells) to the empty queue 0 plans queue 1's frame, then (the egress
  // takes that frame) one frame of queue 2 and one of queue 3: 50 cells short at eviction.
  buffer_->count_arrival(0);
  EvictedFrames evicted;
  evicted.reserve(4000, 8);
  const SharedBuffer::RoomMade room =
      buffer_->make_room(*cache_, 0, 94, false, &racing_pick, &evicted);
  ASSERT_NE(held_by_egress, kNoCell) << "the picker never played the egress worker";
  EXPECT_TRUE(room.reserved);
  EXPECT_EQ(room.pushed_out_cells, 100u);  // all four 25-cell frames
  EXPECT_FALSE(room.waited_out);
  EXPECT_EQ(buffer_->stats(0).stalled_pkts.load(), 0u);
  if (room.reserved) {
    std::vector<std::byte> frame(1500);
    buffer_->enqueue_reserved(*cache_, 0, frame, FrameMeta{});
  } else {
    buffer_->count_drop(0, DropReason::kPoolFull, 94);
  }
  EXPECT_EQ(buffer_->state().queue_cells(0), room.reserved ? 94u : 0u);
  EXPECT_EQ(buffer_->stats(2).dropped_cells[static_cast<size_t>(DropReason::kPushedOut)] +
                buffer_->stats(3).dropped_cells[static_cast<size_t>(DropReason::kPushedOut)],
            room.pushed_out_cells);
  // Every frame pushed out was recorded, from the queues it left.
  ASSERT_EQ(evicted.frames.size(), 4u);
  for (const EvictedFrames::Frame& f : evicted.frames) {
    EXPECT_TRUE(f.desc.queue == 2 || f.desc.queue == 3);
    EXPECT_EQ(f.desc.bytes, 400u);
  }
  buffer_->release(*cache_, held_by_egress);  // the egress worker sent it
}

// The egress worker takes the first planned victim, and after the second victim's push-out no
// queue is longer than the arrival's: the arrival awaits the taken frame's cells for
// kVictimWait. They do not come back (the worker here never sends the frame, as a descheduled
// one would not), so the arrival is refused after a push-out (the documented exception), and its
// queue counts it as stalled: a drop of the emulation, not of the buffer.
TEST_F(MakeRoomRace, AnArrivalThatWaitedOutTheEgressIsCountedAsStalled) {
  put(1, 960);  // 60 cells: the first victim, taken by the egress worker
  put(2, 800);  // 50 cells: the second, pushed out
  put(3, 640);  // 40 cells: shorter than what the arrival then holds
  ASSERT_EQ(buffer_->state().total_cells(), 150u);

  buffer_->count_arrival(0);
  const auto start = std::chrono::steady_clock::now();
  const SharedBuffer::RoomMade room = buffer_->make_room(*cache_, 0, 94, false, &racing_pick);
  ASSERT_NE(held_by_egress, kNoCell) << "the picker never played the egress worker";
  EXPECT_GE(std::chrono::steady_clock::now() - start, SharedBuffer::kVictimWait);
  EXPECT_FALSE(room.reserved);
  EXPECT_TRUE(room.waited_out);
  EXPECT_EQ(room.pushed_out_cells, 50u);
  EXPECT_EQ(buffer_->stats(0).stalled_pkts.load(), 1u);
  EXPECT_EQ(buffer_->state().queue_cells(0), 0u);   // the cells it held went back
  EXPECT_EQ(buffer_->state().queue_cells(3), 40u);  // never planned
  buffer_->count_drop(0, DropReason::kPoolFull, 94);
  buffer_->release(*cache_, held_by_egress);
}

TEST_F(SharedBufferTest, ProbeModeSeesTheRegistersOfTheLastBoundary) {
  ASSERT_TRUE(arrive(0, 800));
  buffer_->set_view_mode(ViewMode::kProbe, 1000);  // snapshots the buffer at once
  EXPECT_EQ(buffer_->view(1000).queue_cells(0), 10u);
  buffer_->advance_probes(1500);
  ASSERT_TRUE(arrive(0, 800));
  EXPECT_EQ(buffer_->view(1500).queue_cells(0), 10u);  // stale until the next boundary
  EXPECT_EQ(buffer_->exact_view().queue_cells(0), 20u);
  const uint64_t next = buffer_->probes().interval_ns();
  buffer_->advance_probes(next);
  EXPECT_EQ(buffer_->view(next).queue_cells(0), 20u);
  buffer_->set_view_mode(ViewMode::kExact, 0);
  EXPECT_EQ(buffer_->view(next).total_cells(), 20u);
}

TEST_F(SharedBufferTest, ResetCountersKeepsPeaksAtCurrentValues) {
  ASSERT_TRUE(arrive(0, 800));
  std::vector<std::byte> out(800);
  buffer_->dequeue_copy(*cache_, 0, out);
  buffer_->reset_counters();
  EXPECT_EQ(buffer_->stats(0).received_pkts.load(), 0u);
  EXPECT_EQ(buffer_->state().peak_queue_cells(0), 0u);
}

}  // namespace
}  // namespace sharebuf::buffer

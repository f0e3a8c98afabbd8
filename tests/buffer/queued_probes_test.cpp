// The queued probes (probe_path "queue") on hand-made departures: a probe of boundary b leaves
// its queue behind every frame that arrived at or before b and reads the depth it leaves behind;
// a probe that finds its queue empty leaves at b and reads 0. Each expectation is worked out
// from the frames' times in the comments, not from the code.
#include "buffer/queued_probes.h"

#include <gtest/gtest.h>

#include "buffer/buffer_view.h"
#include "buffer/probe_registers.h"

namespace sharebuf::buffer {
namespace {

constexpr uint64_t kInterval = 1'000;
constexpr uint64_t kEmpty = QueuedProbes::kNoFrame;

class QueuedProbesTest : public ::testing::Test {
 protected:
  // Two ports of one queue each: queue 0 is the one under test, queue 1 holds `other` cells
  // throughout (the sums must add it).
  QueuedProbesTest() : layout_(1000, 80, {PortSpec{.num_queues = 1}, PortSpec{.num_queues = 1}}) {
    state_ = std::make_unique<BufferState>(layout_);
    probes_ = std::make_unique<QueuedProbes>(layout_, state_->fair_share_cells());
  }
  void start(uint64_t delay, uint32_t other = 4) {
    ASSERT_TRUE(state_->try_reserve(1, other));
    probes_->reset(*state_, 0, kInterval, delay);
  }
  // One-cell frames: arrival and departure as the datapath reports them.
  void arrive(uint64_t t) {
    const bool was_empty = state_->queue_cells(0) == 0;
    probes_->advance(*state_, t);
    ASSERT_TRUE(state_->try_reserve(0, 1));
    if (was_empty) probes_->on_arrival_to_empty(*state_, 0, t);
  }
  // The head frame (arrived at `arrival`) starts at `left` - 1000 and leaves at `left`.
  void depart(uint64_t arrival, uint64_t next_arrival, uint64_t left) {
    probes_->advance(*state_, left - 1000);
    state_->release(0, 1);
    probes_->on_departure(*state_, 0, arrival, next_arrival, state_->queue_cells(0), left - 1000,
                          left);
  }
  uint32_t seen(uint64_t t) {
    probes_->advance(*state_, t);
    return probes_->registers().queue[0].v.load();
  }
  // Frames 1-6 at t = 1..6, frame 7 at 1500, frame 8 at 2500; frames 1-5 leave at 1001 ...
  // 5001, each with the next frame behind it: no probe leaves with any of them.
  void burst_to_5001() {
    for (uint64_t t = 1; t <= 6; ++t)
      arrive(t);
    EXPECT_EQ(seen(1000), 0u);
    depart(1, 2, 1001);
    arrive(1500);
    depart(2, 3, 2001);
    depart(3, 4, 3001);
    arrive(2500);
    depart(4, 5, 4001);
    depart(5, 6, 5001);
  }
  // Frame 1 (arrived 500) leaves at 1600 with boundary 1000's probe (reads 1); frame 2 (1500)
  // leaves at 1900, emptying the queue before boundary 2000.
  void empty_at_1900() {
    start(0);
    arrive(500);
    arrive(1500);
    depart(500, 1500, 1600);
    EXPECT_EQ(seen(1600), 1u);
    depart(1500, kEmpty, 1900);
  }
  uint32_t total() const { return probes_->registers().total.load(); }
  uint32_t port0() const { return probes_->registers().port[0].v.load(); }

  BufferLayout layout_;
  std::unique_ptr<BufferState> state_;
  std::unique_ptr<QueuedProbes> probes_;
};

// Six frames at t = 1..6 and two at 1500 and 2500; one leaves every 1000 ns from 1001 on (the
// calls in time order: frame k starts 1000 ns before its last bit leaves).
//   - frames 1-5 leave with no boundary between their arrival and the next one's: no probe;
//   - frame 6 (arrived 6) leaves at 6001, the next frame arrived at 1500: boundary 1000's probe
//     was behind it and reads the 2 frames left;
//   - frame 7 (1500) leaves at 7001 before frame 8 (2500): boundary 2000's probe reads 1;
//   - frame 8 leaves at 8001, the queue empty: boundary 8000's probe reads 0.
// The snapshot view would have shown 6 cells from boundary 1000 on; these registers show 0 until
// 6001 — the probe of 1000 waited 5 us in the queue it measures.
TEST_F(QueuedProbesTest, AProbeReadsTheDepthWhenItLeavesBehindTheFramesBeforeIt) {
  start(0);
  burst_to_5001();
  EXPECT_EQ(seen(5500), 0u);
  depart(6, 1500, 6001);
  EXPECT_EQ(seen(6000), 0u);  // frame 6's last bit has not left yet
  EXPECT_EQ(seen(6001), 2u);
  EXPECT_EQ(port0(), 2u);
  EXPECT_EQ(total(), 2u + 4u);  // queue 1's 4 cells
  depart(1500, 2500, 7001);
  EXPECT_EQ(seen(7001), 1u);
  depart(2500, kEmpty, 8001);
  EXPECT_EQ(seen(8001), 0u);
  EXPECT_EQ(total(), 4u);
  EXPECT_EQ(probes_->pending(), 0u);
}

// The same readings reach ingress `delay` after the probe leaves.
TEST_F(QueuedProbesTest, ReadingsReachIngressTheRecirculationDelayLater) {
  start(500);
  burst_to_5001();
  depart(6, 1500, 6001);
  EXPECT_EQ(seen(6500), 0u);
  EXPECT_EQ(seen(6501), 2u);
  depart(1500, 2500, 7001);
  EXPECT_EQ(seen(7400), 2u);
  EXPECT_EQ(seen(7501), 1u);
}

// A queue that empties between boundaries: frame 1 (arrived 500) leaves at 1600 carrying
// boundary 1000's probe (reads 1: frame 2); frame 2 (1500) leaves at 1900, before boundary
// 2000, so no probe left with it and the register still says 1. Boundary 2000's probe then finds
// the queue empty and reads 0 at 2000 — unless a frame arrived first, which it waits behind.
TEST_F(QueuedProbesTest, AQueueEmptyAtABoundaryReadsZeroThen) {
  empty_at_1900();
  EXPECT_EQ(seen(1999), 1u);
  EXPECT_EQ(seen(2000), 0u);
  EXPECT_EQ(total(), 4u);
}

TEST_F(QueuedProbesTest, AFrameBeforeTheBoundaryHoldsTheProbeBack) {
  empty_at_1900();
  arrive(1950);                // before boundary 2000: its probe queues behind this frame
  EXPECT_EQ(seen(2100), 1u);   // not 0: the probe has not left
  depart(1950, kEmpty, 2950);  // it leaves with the frame, reading 0
  EXPECT_EQ(seen(2950), 0u);
}

TEST_F(QueuedProbesTest, AFrameAfterTheBoundaryFindsTheZeroReadingTaken) {
  empty_at_1900();
  arrive(2100);  // boundary 2000's probe left at 2000 with 0
  EXPECT_EQ(seen(2100), 0u);
  // Frame 3 arrived after boundary 2000: no probe waits behind it until boundary 3000's.
  depart(2100, kEmpty, 2900);
  EXPECT_EQ(seen(2900), 0u);
}

// Boundary 1000's probe found the queue empty (its frames arrived at 1100 and 1200) and left at
// once: frame 1 leaving at 1600 carries no probe, and the register keeps 0, not frame 2's 1.
TEST_F(QueuedProbesTest, FramesThatArrivedAfterABoundaryCarryNoProbeOfIt) {
  start(0);
  arrive(1100);
  arrive(1200);
  depart(1100, 1200, 1600);
  EXPECT_EQ(seen(1600), 0u);
  depart(1200, kEmpty, 2100);  // boundary 2000's probe was behind frame 2: reads 0
  EXPECT_EQ(seen(2100), 0u);
}

// ProbeRegisters with probe_path "queue" hand these registers to a probe-view reader.
TEST(ProbeRegistersQueued, TheViewReadsTheQueuedRegisters) {
  const BufferLayout layout(1000, 80, {PortSpec{.num_queues = 1}});
  BufferState state(layout);
  ProbeRegisters probes(layout, kInterval, 0, ProbePath::kQueue, state.fair_share_cells());
  EXPECT_EQ(probes.path(), ProbePath::kQueue);
  ASSERT_TRUE(state.try_reserve(0, 3));
  probes.set_enabled(true, state, 0);
  ASSERT_TRUE(state.try_reserve(0, 5));
  probes.advance(state, 5000);
  // The snapshot of boundary 5000 would say 8; no probe has left since the start (3).
  EXPECT_EQ(BufferView::probe(probes, state, 5000).queue_cells(0), 3u);
  EXPECT_EQ(BufferView::probe(probes, state, 5000).total_cells(), 3u);
  ProbeRegisters direct(layout, kInterval, 0);
  direct.set_enabled(true, state, 0);
  direct.advance(state, 5000);
  EXPECT_EQ(BufferView::probe(direct, state, 5000).queue_cells(0), 8u);
}

}  // namespace
}  // namespace sharebuf::buffer

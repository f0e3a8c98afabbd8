// The probe view with probe_path "queue" through the buffer and the departure step every engine
// takes (model/departure_step.h): the scenario of tests/buffer/queued_probes_test.cpp's first
// test, with real frames of 1000 B (13 cells of 80 B) at 8 Gbit/s (1000 ns each), so what the
// enqueue and the departure step report to the probes is checked as well as the rule.
#include <vector>

#include <gtest/gtest.h>

#include "model/departure_step.h"
#include "model/switch_config.h"
#include "tests/fixtures/buffer_fixture.h"

namespace sharebuf::model {
namespace {

class Quiet final : public policies::Policy {
 public:
  explicit Quiet(const policies::PolicyEnv& env) : Policy(env) {}
  std::string_view name() const noexcept override { return "quiet"; }
  policies::Verdict admit(const policies::ArrivalContext&,
                          const buffer::BufferView&) noexcept override {
    return policies::Verdict::accept();
  }
  uint32_t threshold_cells(uint32_t, uint8_t, const buffer::BufferView&) const noexcept override {
    return 0;
  }
};

class QueuedProbeViewTest : public testing::BufferFixture {
 protected:
  static constexpr uint64_t kRate = 8'000'000'000;  // 1000 B in 1000 ns
  void make(buffer::ProbePath path) {
    make_buffer({.capacity_cells = 1000,
                 .ports = {buffer::PortSpec{.num_queues = 1}},
                 .view_mode = buffer::ViewMode::kProbe,
                 .probe_interval_ns = 1'000,
                 .probe_path = path});
    env_.layout = &buffer_->layout();
    policy_ = std::make_unique<Quiet>(env_);
  }
  void arrive(uint64_t t) {
    buffer_->advance_probes(t);
    std::vector<std::byte> frame(1000);
    buffer_->count_arrival(0);
    ASSERT_TRUE(buffer_->enqueue(*cache_, 0, frame, {.arrival_ns = t}));
  }
  void depart(uint64_t start) {
    buffer_->advance_probes(start);
    ASSERT_TRUE(depart_next(*buffer_, *cache_, scheduler_, *policy_, 0, start, kRate));
  }
  uint32_t seen(uint64_t t) {
    buffer_->advance_probes(t);
    return buffer_->view(t).queue_cells(0);
  }
  // Frames at t = 1..6, 1500 and 2500; frame k starts at (k - 1) x 1000 + 1 and its last bit
  // leaves 1000 ns later. The register at 1500, 5500, 6001, 7001 and 8001.
  std::vector<uint32_t> run() {
    std::vector<uint32_t> reads;
    for (uint64_t t = 1; t <= 6; ++t)
      arrive(t);
    depart(1);
    arrive(1500);
    reads.push_back(seen(1500));
    depart(1001);
    depart(2001);
    arrive(2500);
    depart(3001);
    depart(4001);
    reads.push_back(seen(5500));
    depart(5001);
    reads.push_back(seen(6001));
    depart(6001);
    reads.push_back(seen(7001));
    depart(7001);
    reads.push_back(seen(8001));
    return reads;
  }
  policies::PolicyEnv env_;
  std::unique_ptr<Quiet> policy_;
  Scheduler scheduler_{SchedulerKind::kRoundRobin, 1, {}};
};

TEST_F(QueuedProbeViewTest, ARegisterWaitsForItsProbeToLeaveTheQueue) {
  make(buffer::ProbePath::kQueue);
  // 0 until boundary 1000's probe leaves behind frame 6 at 6001 (frames 7 and 8 left: 26
  // cells), then boundary 2000's behind frame 7 (13), then 8000's with frame 8 (0).
  EXPECT_EQ(run(), (std::vector<uint32_t>{0, 0, 26, 13, 0}));
}

TEST_F(QueuedProbeViewTest, TheSnapshotViewSeesEveryBoundaryAtOnce) {
  make(buffer::ProbePath::kDirect);
  // A boundary's snapshot is the buffer before the first event at or after it (a frame's cells
  // leave when it starts): boundary 1000, frames 2-6 (65 cells); 5000, frames 6-8 (39); 6000,
  // 7-8 (26); 7000, 8 (13); 8000, none.
  EXPECT_EQ(run(), (std::vector<uint32_t>{65, 39, 26, 13, 0}));
}

}  // namespace
}  // namespace sharebuf::model

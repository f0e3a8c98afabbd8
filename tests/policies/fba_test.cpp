// FBA (FB paper, section 5.2): DT with per-queue alphas recomputed periodically from
// FB's factors. Between updates the alphas are frozen; at an update they equal FB's factors on the
// same snapshot.
#include "policies/fba.h"

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "policies/fb.h"
#include "tests/fixtures/occupancy.h"

namespace sharebuf::policies {
namespace {

constexpr uint64_t kMs = 1'000'000;

// Port 0: two round-robin queues; port 1: one queue. All queues carry the low class.
struct FbaFixture : ::testing::Test {
  buffer::BufferLayout layout{
      10000, 80, {buffer::PortSpec{.num_queues = 2}, buffer::PortSpec{.num_queues = 1}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  PolicyEnv env{.layout = &layout};

  std::unique_ptr<FbaPolicy> make(double period_ms) {
    Params p;
    p.values = {{"period_ms", period_ms}};
    auto fba = std::make_unique<FbaPolicy>(p, env);
    fba->on_install(view);
    return fba;
  }
  void set_queue(uint32_t q, uint32_t cells) { testing::set_queue_cells(state, q, cells); }
  void arrive(FbaPolicy& p, uint64_t now_ns) {
    (void)p.admit({.now_ns = now_ns, .queue = 2, .port = 1, .cells = 1}, view);
  }
  void TearDown() override {
    for (uint32_t q = 0; q < 3; ++q)
      set_queue(q, 0);
  }
};

TEST_F(FbaFixture, EmptyBufferGivesEveryQueueItsClassAlpha) {
  auto p = make(1000);
  for (uint32_t q = 0; q < 3; ++q)
    EXPECT_DOUBLE_EQ(p->queue_alpha(q), 0.5);
}

TEST_F(FbaFixture, AlphasAreFrozenBetweenUpdates) {
  auto p = make(1);
  arrive(*p, 0);  // first update (t = 0), next due at 1 ms
  const uint64_t after_first = p->updates();
  set_queue(0, 100);
  set_queue(1, 100);
  set_queue(2, 100);
  arrive(*p, kMs - 1);
  EXPECT_EQ(p->updates(), after_first);
  EXPECT_DOUBLE_EQ(p->queue_alpha(0), 0.5);  // the old snapshot
  arrive(*p, kMs);
  EXPECT_EQ(p->updates(), after_first + 1);
  // Three congested low queues; q0 shares its port with q1 (round robin 1/2).
  EXPECT_DOUBLE_EQ(p->queue_alpha(0), 0.5 * 0.5 / 3);
  EXPECT_DOUBLE_EQ(p->queue_alpha(2), 0.5 * 1.0 / 3);
  // The buffer drains, but until the next period the small alphas stay: FBA's lag.
  set_queue(0, 0);
  set_queue(1, 0);
  set_queue(2, 0);
  arrive(*p, kMs + kMs / 2);
  EXPECT_DOUBLE_EQ(p->queue_alpha(2), 0.5 / 3);
  arrive(*p, 2 * kMs);
  EXPECT_DOUBLE_EQ(p->queue_alpha(2), 0.5);
}

TEST_F(FbaFixture, AtAnUpdateTheThresholdsEqualFbsOnTheSameSnapshot) {
  auto fba = make(1);
  FbPolicy fb(Params{}, env);
  set_queue(0, 300);
  set_queue(2, 700);
  arrive(*fba, 5 * kMs);
  for (uint32_t q = 0; q < 3; ++q)
    EXPECT_EQ(fba->threshold_cells(q, 0, view), fb.threshold_cells(q, 0, view)) << "queue " << q;
}

// One alpha per queue: a frame is held to its queue's alpha (that of the first class mapped to
// the queue), not its own class's, unlike FB. Queue 0 carries class h (alpha_high 20), so a
// class-l frame (alpha_low 0.5) in it is accepted at 5000 cells with Rem 5000, where FB would
// hold it to 0.5 * Rem = 2500.
TEST_F(FbaFixture, ClassesInOneQueueAreHeldToTheQueuesAlpha) {
  env.classes = {TrafficClass{.name = "h", .group = PriorityGroup::kHigh},
                 TrafficClass{.name = "l", .group = PriorityGroup::kLow}};
  env.queue_class = {0, 0, 0};
  auto p = make(1000);
  FbPolicy fb(Params{}, env);
  set_queue(0, 5000);
  EXPECT_TRUE(p->admit({.now_ns = 1, .queue = 0, .class_id = 1, .cells = 1}, view).accepted());
  EXPECT_TRUE(p->admit({.now_ns = 1, .queue = 0, .class_id = 0, .cells = 1}, view).accepted());
  EXPECT_FALSE(fb.admit({.now_ns = 1, .queue = 0, .class_id = 1, .cells = 1}, view).accepted());
  EXPECT_EQ(p->threshold_cells(0, 1, view), p->threshold_cells(0, 0, view));
  EXPECT_GT(p->threshold_cells(0, 1, view), 5000u);
}

TEST_F(FbaFixture, PeriodBelowOneMillisecondIsRejected) {
  EXPECT_THROW(make(0.5), ConfigError);
}

}  // namespace
}  // namespace sharebuf::policies

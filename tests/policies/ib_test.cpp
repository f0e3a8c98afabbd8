// IB: DT plus approximate fair dropping. The fair share's PI step and the drop probability by
// hand, the drops' rate against that probability, AFD's fairness (queues above the fair share
// keep equal bytes per window whatever they send), and DT still holding.
#include "policies/ib.h"

#include <cmath>

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "policies/registry.h"
#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

struct IbFixture : ::testing::Test {
  // One port of two queues, 100 000 cells of 80 bytes.
  buffer::BufferLayout layout{100'000, 80, {buffer::PortSpec{.num_queues = 2}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  IbPolicy ib{Params{}, PolicyEnv{.layout = &layout}};
  bool admit(uint32_t q, uint64_t now_ns, uint32_t bytes = 1500) {
    return ib
        .admit(
            {.now_ns = now_ns, .queue = q, .port = 0, .cells = (bytes + 79) / 80, .bytes = bytes},
            view)
        .accepted();
  }
  void TearDown() override {
    for (uint32_t q = 0; q < layout.num_queues(); ++q)
      state.release(q, state.queue_cells(q));
  }
};

// Queue 0 holds 200 000 bytes (2500 cells). In the first window 400 frames of 1500 bytes arrive
// (the drop probability is 0: M starts at 1, so 15 M < MFair). The first arrival after 50 us ends
// the window: M = 600 001 and MFair = 4e6 - 1.8 (200 000 - 15 000) + 1.7 (0 - 15 000) = 3 641 500,
// so p = 1 - 3 641 500 / 9 000 015 = 0.5954. Of the next 4000 arrivals about that share is
// dropped (the draws are seeded: within 4 standard deviations, 0.031).
TEST_F(IbFixture, FairShareStepAndDropProbabilityByHand) {
  ASSERT_TRUE(state.try_reserve(0, 2500));
  for (int i = 0; i < 400; ++i)
    ASSERT_TRUE(admit(0, 1'000 + 100 * static_cast<uint64_t>(i)));
  EXPECT_EQ(ib.drop_probability(0), 0.0);
  admit(0, 51'000);
  const double p = 1.0 - 3'641'500.0 / 9'000'015.0;
  EXPECT_NEAR(ib.drop_probability(0), p, 1e-9);
  const auto afd_drops = [&] {
    return ib.describe(view)["state"]["afd"][0]["afd_drops"].get<uint64_t>();
  };
  const uint64_t before = afd_drops();
  int dropped = 0;
  for (int i = 0; i < 4000; ++i)
    dropped += admit(0, 51'001 + static_cast<uint64_t>(i) / 100) ? 0 : 1;
  EXPECT_NEAR(dropped / 4000.0, p, 0.031);
  EXPECT_EQ(afd_drops() - before, static_cast<uint64_t>(dropped));
}

// AFD leaves queues shorter than afd_min_queue_bytes (150 KiB) alone, whatever the probability.
TEST_F(IbFixture, NoAfdDropBelowTheMinimumQueue) {
  ASSERT_TRUE(state.try_reserve(0, 1900));  // 152 000 bytes < 153 600
  for (int i = 0; i < 400; ++i)
    admit(0, 1'000 + 100 * static_cast<uint64_t>(i));
  admit(0, 51'000);
  ASSERT_GT(ib.drop_probability(0), 0.5);
  for (int i = 0; i < 1000; ++i)
    EXPECT_TRUE(admit(0, 51'001));
}

// AFD's point: queues sending above the fair share keep MFair / 15 bytes per window each, the
// excess dropped. Queue 0 sends twice what queue 1 sends (150-byte frames, so the draws' noise is
// about 3 % of the ratio); their admitted bytes come out equal (within 10 %), about MFair / 15.
TEST_F(IbFixture, QueuesAboveTheFairShareKeepEqualShares) {
  ASSERT_TRUE(state.try_reserve(0, 2500));
  ASSERT_TRUE(state.try_reserve(1, 2500));
  uint64_t t = 1'000;
  auto window = [&](int frames0, int frames1, uint64_t* kept0, uint64_t* kept1) {
    for (int i = 0; i < std::max(frames0, frames1); ++i) {
      if (i < frames0 && admit(0, t, 150) && kept0) *kept0 += 150;
      if (i < frames1 && admit(1, t, 150) && kept1) *kept1 += 150;
      t += 40'000 / std::max(frames0, frames1);
    }
    t = (t / 51'000 + 1) * 51'000;  // into the next window
  };
  window(16000, 8000, nullptr, nullptr);  // M: 2.4 MB and 1.2 MB
  uint64_t kept0 = 0, kept1 = 0;
  window(16000, 8000, &kept0, &kept1);
  const double mfair = ib.describe(view)["state"]["afd"][0]["mfair_bytes"].get<double>();
  EXPECT_NEAR(static_cast<double>(kept0) / static_cast<double>(kept1), 1.0, 0.1);
  EXPECT_NEAR(static_cast<double>(kept0), mfair / 15, 0.1 * mfair / 15);
}

// DT still decides first: at Q >= alpha x Rem (alpha 0.5) the frame is refused, AFD or not.
TEST_F(IbFixture, DtStillHolds) {
  ASSERT_TRUE(state.try_reserve(0, 33'334));  // Rem 66 666: 0.5 x Rem = 33 333 < 33 334
  EXPECT_FALSE(admit(0, 1'000));
  EXPECT_EQ(ib.describe(view)["state"]["afd"][0]["afd_drops"].get<uint64_t>(), 0u);
  state.release(0, 2);  // 33 332 < 0.5 x 66 668 = 33 334
  EXPECT_TRUE(admit(0, 2'000));
}

TEST(Ib, RegisteredWithItsDeclaredDefaults) {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}}};
  const auto p = make_policy("ib", Params{}, PolicyEnv{.layout = &layout});
  EXPECT_EQ(p->params()["alpha"], 0.5);
  EXPECT_EQ(p->params()["afd_window_us"], 50.0);
  EXPECT_EQ(p->params()["qref_bytes"], 15000);
  EXPECT_EQ(p->params()["afd_min_queue_bytes"], 153600);
  EXPECT_EQ(p->params()["mfair_start_bytes"], 4e6);
  EXPECT_EQ(p->params()["variant"], "intended");
}

// The authors' code as written (variant "as-coded"): DropAfd(DPPQueue, dropP) against
// DropAfd(double prob, uint32_t priority). Same trace as FairShareStepAndDropProbabilityByHand:
// queue 0 holds 200 000 bytes (2500 cells, above the 1920-cell floor) and its drop probability
// is 0.5954 after the first window. The intended rule drops about that share of 4000 arrivals at
// queue 0; as coded, queue 0 (prob = its index 0) never loses a frame to AFD. Queue 1 is empty
// and its own drop probability 0 (M = 1), yet as coded every arrival there is dropped (prob = 1,
// and the queue checked is uint32_t(0.0) = queue 0, longer than the floor) until queue 0 is
// shorter than the floor.
struct IbAsCodedFixture : IbFixture {
  IbPolicy coded{Params{.values = {{"variant", "as-coded"}}}, PolicyEnv{.layout = &layout}};
  bool admit_coded(uint32_t q, uint64_t now_ns, uint32_t bytes = 1500) {
    return coded
        .admit(
            {.now_ns = now_ns, .queue = q, .port = 0, .cells = (bytes + 79) / 80, .bytes = bytes},
            view)
        .accepted();
  }
};

TEST_F(IbAsCodedFixture, SwappedArgumentsSpareQueueZeroAndDropQueueOne) {
  ASSERT_TRUE(state.try_reserve(0, 2500));
  for (int i = 0; i < 400; ++i) {
    ASSERT_TRUE(admit(0, 1'000 + 100 * static_cast<uint64_t>(i)));
    ASSERT_TRUE(admit_coded(0, 1'000 + 100 * static_cast<uint64_t>(i)));
  }
  admit(0, 51'000);
  admit_coded(0, 51'000);
  ASSERT_NEAR(coded.drop_probability(0), 1.0 - 3'641'500.0 / 9'000'015.0, 1e-9);
  int intended = 0, as_coded = 0;
  for (int i = 0; i < 4000; ++i) {
    intended += admit(0, 51'001 + static_cast<uint64_t>(i) / 100) ? 0 : 1;
    as_coded += admit_coded(0, 51'001 + static_cast<uint64_t>(i) / 100) ? 0 : 1;
  }
  EXPECT_NEAR(intended / 4000.0, 0.5954, 0.031);
  EXPECT_EQ(as_coded, 0);
  // Queue 1: drop probability 0, empty.
  ASSERT_EQ(coded.drop_probability(1), 0.0);
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(admit(1, 52'000));
    EXPECT_FALSE(admit_coded(1, 52'000));
  }
  EXPECT_EQ(coded.describe(view)["state"]["afd"][1]["afd_drops"].get<uint64_t>(), 100u);
  state.release(0, 600);  // queue 0 at 1900 cells (152 000 bytes): below the floor
  for (int i = 0; i < 100; ++i)
    EXPECT_TRUE(admit_coded(1, 52'000));
}

// As coded, once a queue's fair share is below one byte, dropP = 1 and the queue checked is the
// port's queue 1: an arrival at queue 1 is dropped iff queue 1 itself is above the floor. (With
// the shares starting at 0 and no window rolled yet; queue 0 above the floor does not matter.)
TEST(IbAsCoded, AZeroFairShareChecksQueueOne) {
  buffer::BufferLayout layout{100'000, 80, {buffer::PortSpec{.num_queues = 2}}};
  buffer::BufferState state{layout};
  const buffer::BufferView view = buffer::BufferView::exact(state);
  IbPolicy coded{Params{.values = {{"variant", "as-coded"}, {"mfair_start_bytes", 0.0}}},
                 PolicyEnv{.layout = &layout}};
  const auto admit = [&](uint32_t q) {
    return coded.admit({.now_ns = 1'000, .queue = q, .port = 0, .cells = 19, .bytes = 1500}, view)
        .accepted();
  };
  ASSERT_TRUE(state.try_reserve(0, 2500));
  ASSERT_TRUE(state.try_reserve(1, 1900));
  EXPECT_TRUE(admit(1));  // queue 1: 1900 cells, not above the 1920-cell floor
  EXPECT_TRUE(admit(0));  // queue 0: index 0, never
  ASSERT_TRUE(state.try_reserve(1, 100));
  EXPECT_FALSE(admit(1));  // queue 1: 2000 cells
  EXPECT_TRUE(admit(0));
  state.release(0, 2500);
  state.release(1, 2000);
}

// DPP as coded holds a redirected frame to the DPP queue's alpha (their DynamicThresholds(0, ...)
// reads alphas[0]); intended, to the arriving class's. Queue 0 (class 0, alpha 0.25) holds
// 30 000 of 100 000 cells, Rem 70 000: a flow's first frame offered to queue 1 (class 1, alpha 2)
// fits under 2 x 70 000 but not under 0.25 x 70 000 = 17 500.
TEST(IbAsCoded, DppUsesTheDppQueuesAlpha) {
  buffer::BufferLayout layout{100'000, 80, {buffer::PortSpec{.num_queues = 2}}};
  buffer::BufferState state{layout};
  const buffer::BufferView view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout,
                      .classes = {TrafficClass{.name = "dpp", .alpha = 0.25},
                                  TrafficClass{.name = "data", .alpha = 2.0}},
                      .queue_class = {0, 1}};
  const nlohmann::json dpp = {{"dpp_packets", 4}};
  nlohmann::json coded_params = dpp;
  coded_params["variant"] = "as-coded";
  IbPolicy intended{Params{.values = dpp}, env};
  IbPolicy coded{Params{.values = coded_params}, env};
  ASSERT_TRUE(state.try_reserve(0, 30'000));
  const ArrivalContext ctx{.now_ns = 1'000,
                           .queue = 1,
                           .port = 0,
                           .class_id = 1,
                           .cells = 1,
                           .bytes = 80,
                           .flow_hash = 7};
  const Verdict a = intended.admit(ctx, view);
  EXPECT_TRUE(a.accepted());
  EXPECT_EQ(a, Verdict::accept_into(0));
  EXPECT_FALSE(coded.admit(ctx, view).accepted());
  state.release(0, 30'000);
}

}  // namespace
}  // namespace sharebuf::policies

namespace sharebuf::policies {
namespace {

// DPP through the real admission step: a flow's first dpp_packets - 1 frames offered to queue 1
// go to queue 0 (counted there), the rest stay in queue 1; a flow idle for the window starts
// again; frames without a flow hash are not prioritised; a verdict naming another port's queue is
// refused as unsupported.
class IbDppTest : public testing::PolicyHarness {
 protected:
  void SetUp() override {
    build({.capacity_cells = 10'000,
           .ports = {buffer::PortSpec{.num_queues = 2}, buffer::PortSpec{}}},
          "ib", {{"dpp_packets", 4}, {"dpp_window_us", 100.0}});
  }
  uint32_t offer_flow(uint64_t now, uint32_t flow, uint32_t q = 1) {
    frame_.assign(80, std::byte{0});
    const policies::ArrivalContext ctx{
        .now_ns = now, .queue = q, .port = 0, .cells = 1, .bytes = 80, .flow_hash = flow};
    last_ = model::admit_frame(*policy_, *buffer_, *cache_, buffer_->exact_view(), ctx, frame_, {});
    EXPECT_TRUE(last_.enqueued);
    return last_.queue;
  }
  uint64_t received(uint32_t q) const { return buffer_->stats(q).received_pkts.load(); }
};

TEST_F(IbDppTest, AFlowsFirstPacketsGoToThePriorityQueue) {
  EXPECT_EQ(offer_flow(1'000, 7), 0u);  // count 1 < 4
  EXPECT_EQ(offer_flow(2'000, 7), 0u);  // 2
  EXPECT_EQ(offer_flow(3'000, 7), 0u);  // 3
  EXPECT_EQ(offer_flow(4'000, 7), 1u);  // 4: not below dpp_packets
  EXPECT_EQ(offer_flow(5'000, 8), 0u);  // another flow: its first
  EXPECT_EQ(offer_flow(6'000, 0), 1u);  // no flow hash: no DPP
  EXPECT_EQ(occupancy(0), 4u);
  EXPECT_EQ(occupancy(1), 2u);
  EXPECT_EQ(received(0), 4u);  // counted where they went
  EXPECT_EQ(received(1), 2u);
  EXPECT_EQ(offer_flow(103'000, 7), 1u);  // 99 us after its last frame: not idle long enough
  EXPECT_EQ(offer_flow(300'000, 7), 0u);  // idle 197 us: a new start
}

// A policy that names another port's queue gets its frame refused, counted at the arrival's queue.
struct WrongPortPolicy final : Policy {
  explicit WrongPortPolicy(const PolicyEnv& env) : Policy(env) {}
  std::string_view name() const noexcept override { return "wrong"; }
  Verdict admit(const ArrivalContext&, const BufferView&) noexcept override {
    return Verdict::accept_into(2);  // port 1's queue
  }
  uint32_t threshold_cells(uint32_t, uint8_t, const BufferView&) const noexcept override {
    return 0;
  }
};

TEST_F(IbDppTest, AnotherPortsQueueIsRefused) {
  WrongPortPolicy wrong(env_);
  frame_.assign(80, std::byte{0});
  const auto out = model::admit_frame(wrong, *buffer_, *cache_, buffer_->exact_view(),
                                      {.queue = 1, .port = 0, .cells = 1, .bytes = 80}, frame_, {});
  EXPECT_FALSE(out.enqueued);
  EXPECT_EQ(out.reason, buffer::DropReason::kUnsupported);
  EXPECT_EQ(received(1), 1u);
  EXPECT_EQ(buffer_->stats(2).received_pkts.load(), 0u);
}

}  // namespace
}  // namespace sharebuf::policies

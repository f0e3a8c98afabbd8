// IB: DT plus approximate fair dropping. The fair share's PI step and the drop probability by
// hand, the drops' rate against that probability, AFD's fairness (queues above the fair share
// keep equal bytes per window whatever they send), and DT still holding.
#include "policies/ib.h"

#include <cmath>

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "policies/registry.h"

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
}

}  // namespace
}  // namespace sharebuf::policies

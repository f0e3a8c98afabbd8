// Smartbuf against Algorithm 1 of the paper and docs/policies/smartbuf.md: the signature map (K
// nearest larger keys, equal keys, ageing, cap) and the policy's phases, burst detection above B /
// sigma, the end of a burst below beta * peak, and the learned cap replacing DT during a burst.
#include "policies/smartbuf.h"

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "tests/fixtures/occupancy.h"

namespace sharebuf::policies {
namespace {

TEST(SmartbufMap, MeanOfTheKNearestLargerKeys) {
  SmartbufMap m(64, 1'000'000'000);
  for (int g = 1; g <= 5; ++g)
    m.insert(g, static_cast<uint32_t>(100 * g), 0);
  EXPECT_DOUBLE_EQ(*m.mean_of_nearest_larger(2.5, 3), 400);  // keys 3, 4, 5
  EXPECT_DOUBLE_EQ(*m.mean_of_nearest_larger(2.0, 2), 250);  // an equal key counts (>=)
  EXPECT_DOUBLE_EQ(*m.mean_of_nearest_larger(4.5, 3), 500);  // fewer than K exist
  EXPECT_DOUBLE_EQ(*m.mean_of_nearest_larger(-7, 1), 100);
  EXPECT_FALSE(m.mean_of_nearest_larger(5.01, 3).has_value());
}

TEST(SmartbufMap, EqualKeyKeepsTheLargerValue) {
  SmartbufMap m(64, 1'000'000'000);
  m.insert(1.5, 300, 0);
  m.insert(1.5, 200, 1);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.entries()[0].max_cells, 300u);
  m.insert(1.5, 400, 2);
  EXPECT_EQ(m.entries()[0].max_cells, 400u);
}

TEST(SmartbufMap, EntriesAgeOutAfterTheirTtl) {
  SmartbufMap m(64, 10);
  m.insert(1, 100, 0);
  m.insert(2, 200, 5);
  m.expire(10);  // exactly ttl: still valid
  EXPECT_EQ(m.size(), 2u);
  m.expire(11);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.entries()[0].gradient, 2);
  m.expire(16);
  EXPECT_EQ(m.size(), 0u);
}

TEST(SmartbufMap, FullMapEvictsTheOldestEntry) {
  SmartbufMap m(3, 1'000'000'000);
  m.insert(3, 300, 10);
  m.insert(1, 100, 20);
  m.insert(2, 200, 30);
  m.insert(0.5, 50, 40);  // evicts key 3, learned first
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.entries()[0].gradient, 0.5);
  EXPECT_EQ(m.entries()[2].gradient, 2);
}

// One port at 1 Gbit/s with 80-byte cells: 0.0015625 cells/ns, so a queue growing by 100 cells
// every 64 us grows at exactly line rate. B = 10000 cells; sigma 5 makes B / sigma = 2000. With
// gradient_weight 1 the smoothed gradient is the raw one, which makes the signatures exact.
struct SmartbufFixture : ::testing::Test {
  static constexpr uint64_t kStepNs = 64'000;
  buffer::BufferLayout layout{10000, 80, {buffer::PortSpec{}, buffer::PortSpec{}}};
  buffer::BufferState state{layout};
  buffer::BufferView view = buffer::BufferView::exact(state);
  PolicyEnv env{.layout = &layout, .port_rate_bps = {1'000'000'000, 1'000'000'000}};
  uint64_t now = 0;

  std::unique_ptr<SmartbufPolicy> make(nlohmann::json extra = nlohmann::json::object()) {
    Params p;
    p.values = {{"gradient_weight", 1.0}};
    p.values.update(extra);
    return std::make_unique<SmartbufPolicy>(p, env);
  }
  void set_queue(uint32_t q, uint32_t cells) { testing::set_queue_cells(state, q, cells); }
  void dequeue_at(SmartbufPolicy& p, uint32_t q, uint32_t cells) {
    set_queue(q, cells);
    now += kStepNs;
    p.on_dequeue({.now_ns = now, .queue = q, .port = static_cast<uint16_t>(q)}, view);
  }
  // A queue grows from empty at `g` times line rate up to `peak` cells (a multiple of 100 * g).
  void grow(SmartbufPolicy& p, uint32_t q, double g, uint32_t peak) {
    dequeue_at(p, q, 0);
    const auto step = static_cast<uint32_t>(100 * g);
    for (uint32_t len = step; len <= peak; len += step)
      dequeue_at(p, q, len);
  }
  // ... and then empties: the burst is over.
  void burst(SmartbufPolicy& p, uint32_t q, double g, uint32_t peak) {
    grow(p, q, g, peak);
    dequeue_at(p, q, 0);
  }
  bool admits(SmartbufPolicy& p, uint32_t q) {
    return p.admit({.now_ns = now, .queue = q, .port = static_cast<uint16_t>(q), .cells = 1}, view)
        .accepted();
  }
  void TearDown() override {
    set_queue(0, 0);
    set_queue(1, 0);
  }
};

TEST_F(SmartbufFixture, OnlyBurstsAboveBOverSigmaAreLearned) {
  auto p = make();
  burst(*p, 0, 1, 1900);  // peak 1900 <= 2000: not a burst
  EXPECT_TRUE(p->map_entries().empty());
  EXPECT_EQ(p->max_seen(0), 0u);  // temp reset anyway
  burst(*p, 0, 2, 2400);
  const auto entries = p->map_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_DOUBLE_EQ(entries[0].gradient, 2.0);  // the gradient at the peak, not at the end
  EXPECT_EQ(entries[0].max_cells, 2400u);
}

TEST_F(SmartbufFixture, BurstEndsOnlyBelowBetaTimesThePeak) {
  auto p = make();
  grow(*p, 0, 1, 2500);
  dequeue_at(*p, 0, 1300);  // 1300 >= 0.5 * 2500: still the same burst
  EXPECT_EQ(p->max_seen(0), 2500u);
  EXPECT_TRUE(p->map_entries().empty());
  dequeue_at(*p, 0, 1200);  // below half the peak: learned, temp reset
  EXPECT_EQ(p->max_seen(0), 0u);
  ASSERT_EQ(p->map_entries().size(), 1u);
  EXPECT_EQ(p->map_entries()[0].max_cells, 2500u);
}

TEST_F(SmartbufFixture, LearningPhaseUsesDtUntilKSignaturesExist) {
  auto p = make();  // K = 3
  EXPECT_EQ(p->describe(view)["state"]["phase"], "learning");
  burst(*p, 0, 1, 3000);
  burst(*p, 1, 2, 4000);   // ports learn from each other: one global map
  grow(*p, 0, 1.5, 2550);  // a burst, but only two signatures: DT
  EXPECT_TRUE(p->learning());
  EXPECT_FALSE(p->learned_threshold(0).has_value());
  EXPECT_EQ(p->threshold_cells(0, 0, view), 10000u - 2550);
  dequeue_at(*p, 0, 0);  // third signature: (1.5, 2550)
  EXPECT_FALSE(p->learning());
  EXPECT_EQ(p->describe(view)["state"]["phase"], "real");
}

TEST_F(SmartbufFixture, RealPhaseCapsABurstAtTheLearnedDemand) {
  auto p = make();
  burst(*p, 0, 1, 3000);
  burst(*p, 0, 2, 4000);
  burst(*p, 1, 3, 4800);
  // A new burst at 1.5 x line rate: below B / sigma it is DT ...
  grow(*p, 0, 1.5, 1950);
  EXPECT_FALSE(p->learned_threshold(0).has_value());
  // ... above it, the mean demand of the nearest larger signatures 2 and 3 (fewer than K).
  dequeue_at(*p, 0, 2100);
  ASSERT_TRUE(p->learned_threshold(0).has_value());
  EXPECT_DOUBLE_EQ(*p->learned_threshold(0), (4000 + 4800) / 2.0);
  EXPECT_TRUE(admits(*p, 0));
  set_queue(0, 4400);  // DT would allow 10000 - 4400 = 5600: Smartbuf caps at 4400
  EXPECT_FALSE(admits(*p, 0));
  set_queue(0, 4399);
  EXPECT_TRUE(admits(*p, 0));
  // The other port is not in a burst: DT.
  EXPECT_EQ(p->threshold_cells(1, 0, view), 10000u - 4399);
  // The burst's end records its prediction next to its peak, and back to DT.
  dequeue_at(*p, 0, 0);
  const auto bursts = p->bursts();
  ASSERT_EQ(bursts.size(), 4u);
  EXPECT_EQ(bursts.back().predicted_cells, 4400u);
  EXPECT_EQ(bursts.back().peak_cells, 2100u);  // the largest length a dequeue saw
  EXPECT_FALSE(p->learned_threshold(0).has_value());
}

TEST_F(SmartbufFixture, AKeyBelowEveryGradientAveragesTheKClosest) {
  auto p = make();
  burst(*p, 0, 1, 3000);
  burst(*p, 0, 2, 4000);
  burst(*p, 0, 3, 4800);
  burst(*p, 0, 4, 6000);
  grow(*p, 1, 0.5, 2050);  // gradient 0.5: keys 1, 2, 3 are the three closest above
  EXPECT_NEAR(*p->learned_threshold(1), (3000 + 4000 + 4800) / 3.0, 1e-9);
  set_queue(1, 0);
  grow(*p, 1, 5, 2500);  // no key >= 5: DT
  EXPECT_FALSE(p->learned_threshold(1).has_value());
}

TEST_F(SmartbufFixture, SignaturesAgeOutAndTheMapIsCapped) {
  auto p = make({{"ttl_s", 0.01}, {"max_entries", 2}});
  burst(*p, 0, 1, 3000);
  burst(*p, 0, 2, 4000);
  burst(*p, 0, 3, 4800);  // cap 2: the oldest (1) goes
  auto entries = p->map_entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].gradient, 2);
  now += 20'000'000;  // 20 ms > ttl
  burst(*p, 0, 1, 2200);
  entries = p->map_entries();
  ASSERT_EQ(entries.size(), 1u);  // the two old ones expired, the new one stays
  EXPECT_EQ(entries[0].gradient, 1);
}

TEST_F(SmartbufFixture, RejectsOutOfRangeParameters) {
  EXPECT_THROW(make({{"k", 0}}), ConfigError);
  EXPECT_THROW(make({{"beta", 1.5}}), ConfigError);
  EXPECT_THROW(make({{"sigma", 0.5}}), ConfigError);
}

// Without a gradient_weight the gradient is the paper's: 1/4 of the new sample, 3/4 of the old.
TEST_F(SmartbufFixture, DefaultGradientWeightIsTheQuarterOfThePaper) {
  SmartbufPolicy p(Params{}, env);
  EXPECT_DOUBLE_EQ(p.params()["gradient_weight"].get<double>(), 0.25);
  dequeue_at(p, 0, 0);
  dequeue_at(p, 0, 200);  // 200 cells in 64 us = 2 x line rate (1.5625 cells/us)
  EXPECT_DOUBLE_EQ(p.gradient(0), 0.25 * 2);
  dequeue_at(p, 0, 300);  // 1 x line rate
  EXPECT_DOUBLE_EQ(p.gradient(0), 0.25 * 1 + 0.75 * 0.5);
}

}  // namespace
}  // namespace sharebuf::policies

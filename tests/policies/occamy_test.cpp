// Occamy: DT at admission; a reclaim that drops the heads of queues over their threshold while a
// bucket of spare memory bandwidth holds tokens. Hand-worked sequences through the real admission
// step: two ports of one queue each at 10 Gbit/s (unshaped), 80-byte cells, so the bucket fills
// at 2 x 15.625 = 31.25 cells per microsecond.
#include "policies/occamy.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "model/departure_step.h"
#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

class OccamyTest : public testing::PolicyHarness {
 protected:
  // Alpha 1 unless the test says otherwise (the sequences below are worked out at alpha 1).
  void build_occamy(nlohmann::json params = nlohmann::json::object(),
                    std::string policy = "occamy") {
    if (!params.contains("alpha")) params["alpha"] = 1.0;
    build({.capacity_cells = 1000, .ports = {buffer::PortSpec{}, buffer::PortSpec{}}}, policy,
          std::move(params));
  }
  // One 10-cell frame to q at time t (ns).
  bool offer_at(uint64_t t, uint32_t q) {
    now_ = t - 1;
    return offer(q, 10);
  }
  uint64_t reclaimed(uint32_t q) const {
    return buffer_->stats(q).dropped(buffer::DropReason::kReclaimed);
  }
  // Queue 0 filled to DT's limit at t = 1 ns: 50 frames, 500 cells (500 < 500 refuses the next).
  void hog() {
    for (int i = 0; i < 50; ++i)
      ASSERT_TRUE(offer_at(1, 0));
    ASSERT_FALSE(offer_at(1, 0));
    ASSERT_EQ(occupancy(0), 500u);
  }
};

// Admission is DT's Q < alpha x Rem, except that an empty queue takes a frame that fits. (No
// bucket, so no reclaim: with one, the second frame would find queue 0 over its threshold and
// reclaim its head, and enter an empty queue.)
TEST_F(OccamyTest, AdmitsLikeDtAndIntoAnEmptyQueue) {
  build_occamy({{"alpha", 1.0 / 1024}, {"token_cap_bytes", 0}});
  EXPECT_TRUE(offer_at(1, 0));   // empty: accepted although 0.001 x 1000 < 10
  EXPECT_FALSE(offer_at(1, 0));  // 10 >= 0.001 x 990
  EXPECT_EQ(last_.reason, buffer::DropReason::kThreshold);
  EXPECT_TRUE(offer_at(1, 1));  // the other queue is empty
}

// The bucket by hand. At t = 1 ns it holds 0.031 cells: the second frame to queue 1 finds queue 0
// over its threshold (500 > Rem 490) and reclaims one head frame (10 cells), leaving -9.97. 300 ns
// later the bucket is still short (-0.6): nothing; at 330 ns it holds 0.34: one more head drop.
TEST_F(OccamyTest, ReclaimsHeadsAtTheSpareBandwidthsRate) {
  build_occamy();
  hog();
  EXPECT_TRUE(offer_at(1, 1));  // Rem 500: queue 0 not over 500
  EXPECT_EQ(reclaimed(0), 0u);
  const uint32_t head = buffer_->queue(0).peek_head();
  const uint32_t tail = buffer_->queue(0).peek_tail();
  EXPECT_TRUE(offer_at(1, 1));  // Rem 490: queue 0 over; one reclaim
  EXPECT_EQ(reclaimed(0), 1u);
  EXPECT_NE(buffer_->queue(0).peek_head(), head);  // the oldest frame went
  EXPECT_EQ(buffer_->queue(0).peek_tail(), tail);
  EXPECT_EQ(last_.reclaimed_cells, 10u);
  EXPECT_EQ(occupancy(0), 490u);
  EXPECT_TRUE(offer_at(1, 1));  // same instant: the bucket is empty
  EXPECT_EQ(reclaimed(0), 1u);
  EXPECT_TRUE(offer_at(301, 1));
  EXPECT_EQ(reclaimed(0), 1u);
  EXPECT_TRUE(offer_at(331, 1));
  EXPECT_EQ(reclaimed(0), 2u);
}

// The cap (1600 bytes = 20 cells) and the departures' share: after a long idle spell the bucket
// holds 20 cells, which pays for two 10-cell head drops; a 10-cell departure first leaves one.
TEST_F(OccamyTest, DeparturesSpendTheBucketAndItIsCapped) {
  for (const bool departure : {false, true}) {
    SCOPED_TRACE(departure ? "after a departure" : "no departure");
    build_occamy();
    hog();
    for (int i = 0; i < 10; ++i)
      ASSERT_TRUE(offer_at(1, 1));  // one reclaim (the second): the bucket is now at -9.97
    ASSERT_EQ(reclaimed(0), 1u);
    now_ = 1'000'000;  // 1 ms: 31250 cells' worth of time, capped at 20
    if (departure) {
      ASSERT_TRUE(depart(1));
    }
    // queue 0 at 490, queue 1 at 100 or 90: Rem 410 or 420, queue 0 over either way
    ASSERT_TRUE(offer_at(1'000'100, 1));
    EXPECT_EQ(reclaimed(0), departure ? 2u : 3u);
    buffer_->drain_all(*cache_);
    TearDown();
    buffer_.reset();
  }
}

// The paper's point (Occamy, Sections 2-3): under DT a queue that filled the buffer before a burst
// gives its cells back only as fast as its port sends, so a burst to another queue meets a
// threshold the hog still sits above; preemption frees them at the memory's spare rate. A burst
// of 40 frames to queue 1, 100 ns apart, while queue 0 drains nothing: DT admits what fits beside
// the hog, Occamy more, and the hog loses head frames, not the burst.
TEST_F(OccamyTest, ABurstGetsMoreOfTheBufferThanUnderDt) {
  auto burst = [&](const std::string& policy) {
    build_occamy(nlohmann::json::object(), policy);
    hog();
    int admitted = 0;
    for (int i = 0; i < 40; ++i)
      admitted += offer_at(1 + 100 * static_cast<uint64_t>(i), 1) ? 1 : 0;
    const uint64_t hog_reclaimed = reclaimed(0);
    buffer_->drain_all(*cache_);
    TearDown();
    buffer_.reset();
    return std::pair{admitted, hog_reclaimed};
  };
  const auto [dt, dt_reclaimed] = burst("dt");
  const auto [occamy, occamy_reclaimed] = burst("occamy");
  // DT: queue 1 grows while 10 x k < 500 - 10 x k, i.e. 25 frames.
  EXPECT_EQ(dt, 25);
  EXPECT_EQ(dt_reclaimed, 0u);
  EXPECT_GT(occamy, dt);
  EXPECT_GT(occamy_reclaimed, 0u);
}

// Two queues over their thresholds, placed without a verdict (no reclaim while they fill): 400
// and 310 cells, Rem 290. After 1 ms the bucket is at its cap, 20 cells: two 10-cell head drops.
// Round robin takes one from each; `longest` both from queue 0 (390 is still the longest over).
TEST_F(OccamyTest, RoundRobinOrLongest) {
  for (const std::string victim : {"round_robin", "longest"}) {
    SCOPED_TRACE(victim);
    build({.capacity_cells = 1000, .ports = {buffer::PortSpec{.num_queues = 3}}}, "occamy",
          {{"victim", victim}, {"alpha", 1.0}});
    auto place = [&](uint32_t q, int frames) {
      frame_.assign(10 * 80, std::byte{0});
      for (int i = 0; i < frames; ++i) {
        buffer_->count_arrival(q);
        ASSERT_TRUE(buffer_->enqueue(*cache_, q, frame_, {}));
      }
    };
    place(0, 40);
    place(1, 31);
    EXPECT_TRUE(offer_at(1'000'000, 2));  // empty queue: accepted after the reclaim
    if (victim == "longest") {
      EXPECT_EQ(reclaimed(0), 2u);
      EXPECT_EQ(reclaimed(1), 0u);
    } else {
      EXPECT_EQ(reclaimed(0), 1u);
      EXPECT_EQ(reclaimed(1), 1u);
    }
    buffer_->drain_all(*cache_);
    TearDown();
    buffer_.reset();
  }
}

// Reclaims race the egress: a thread sends queue 0's frames while another offers frames that
// reclaim from it. Every frame ends transmitted, reclaimed or queued, and every cell comes back
// (the fixture's teardown checks the accounting; the TSan build checks the race).
TEST_F(OccamyTest, ReclaimsAreSafeBesideTheEgress) {
  build_occamy({{"speedup", 8.0}});
  std::atomic<bool> stop{false};
  uint64_t head_bytes_seen = 0;
  std::thread egress([&] {
    buffer::CellCache cache(buffer_->pool());
    // The scheduler's look at the head frame's length, as EgressPath::send_burst does, many
    // times per departure (a shaped port waits): a reclaim may free that frame and the RX thread
    // reuse its cells meanwhile (TSan found the unlocked read this once was).
    for (uint32_t i = 0; !stop.load(); ++i) {
      head_bytes_seen += model::head_bytes(*buffer_, 0, 0);
      if (i % 8 != 0) continue;
      const uint32_t head = buffer_->dequeue(0);
      if (head != buffer::kNoCell) buffer_->release(cache, head);
    }
  });
  uint64_t t = 1;
  for (int i = 0; i < 20000; ++i) {
    t += 50;
    offer_at(t, i % 4 == 3 ? 1 : 0);
  }
  stop = true;
  egress.join();
  EXPECT_GT(reclaimed(0) + reclaimed(1), 0u);
  EXPECT_GE(head_bytes_seen, 0u);
}

// The simulator's bucket (token_model "simulator"): ticks of 1500 bytes at the summed 20 Gbit/s,
// 600 ns apart, each adding 8 tokens of 200 B (capped at 8) and making at most one head drop.
// Frames here are 800 B (4 tokens). Queue 0 is over its threshold once 2 Q0 + Q1 > 1000 cells.
// The sharebuf bucket would drop at t = 1 (see ReclaimsHeadsAtTheSpareBandwidthsRate); here no
// tick has passed. At 601 one tick: one drop although queue 0 stays over and 4 tokens remain; at
// 1801 two ticks: the first drops (queue 0 at 480: 960 + 40 = 1000, no longer over), the second
// finds no queue over.
TEST_F(OccamyTest, SimulatorTokensTickAndDropOneHeadATick) {
  build_occamy({{"token_model", "simulator"}});
  EXPECT_DOUBLE_EQ(policy_->describe(buffer_->exact_view())["state"]["tick_ns"].get<double>(),
                   600.0);
  hog();
  EXPECT_TRUE(offer_at(1, 1));    // Q1 10: queue 0 over from now on
  EXPECT_TRUE(offer_at(1, 1));    // no tick yet
  EXPECT_TRUE(offer_at(599, 1));  // still tick 0; Q1 30: 1030, two drops' worth over
  EXPECT_EQ(reclaimed(0), 0u);
  EXPECT_TRUE(offer_at(601, 1));  // tick 1: one drop
  EXPECT_EQ(reclaimed(0), 1u);
  EXPECT_EQ(occupancy(0), 490u);   // 980 + 40 = 1020: still over
  EXPECT_TRUE(offer_at(1801, 1));  // ticks 2 and 3: one drop, then none over
  EXPECT_EQ(reclaimed(0), 2u);
  EXPECT_EQ(occupancy(0), 480u);
}

// The DPDK prototype's bucket (token_model "dpdk"): a balance of 200-B tokens, refilled after at
// least 0.5 us by floor(55e6/s x elapsed), capped at 200; head drops while the balance is >= 0.
// At t = 1 the balance is 0, which still drops (to -4: an 800-B frame). At 599 ns the refill adds
// floor(55e6 x 599e-9) = 32 (balance 28) but no queue is over (980 + 20 = 1000); at 601 (no
// refill: 2 ns later) queue 0 is over again (1010) and loses one head (balance 24), and only one:
// 960 + 30 = 990.
TEST_F(OccamyTest, DpdkBalanceDropsWhileNotNegative) {
  build_occamy({{"token_model", "dpdk"}});
  hog();
  EXPECT_TRUE(offer_at(1, 1));  // Q1 10; 1000 + 0 was not over at its reclaim
  EXPECT_EQ(reclaimed(0), 0u);
  EXPECT_TRUE(offer_at(1, 1));  // 1010 over, balance 0: one drop, balance -4
  EXPECT_EQ(reclaimed(0), 1u);
  EXPECT_TRUE(offer_at(599, 1));  // refill 32: balance 28; 980 + 20: not over
  EXPECT_EQ(reclaimed(0), 1u);
  EXPECT_TRUE(offer_at(601, 1));  // 980 + 30 over: one drop, balance 24
  EXPECT_EQ(reclaimed(0), 2u);
  EXPECT_EQ(occupancy(0), 480u);
}

// The "sharebuf" model's knobs are refused with another model: a run never states one bucket
// and runs another.
TEST(Occamy, AnotherTokenModelRefusesSharebufsKnobs) {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}}};
  for (const char* key : {"speedup", "token_cap_bytes"}) {
    try {
      make_policy("occamy", Params{.values = {{"token_model", "dpdk"}, {key, 1}}},
                  PolicyEnv{.layout = &layout});
      ADD_FAILURE() << key << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("sharebuf"), std::string::npos) << e.what();
    }
  }
  const auto p = make_policy("occamy", Params{.values = {{"token_model", "dpdk"}}},
                             PolicyEnv{.layout = &layout});
  EXPECT_FALSE(p->params().contains("speedup"));  // params() shows only what runs
  EXPECT_EQ(p->params()["token_model"], "dpdk");
}

TEST(Occamy, RegisteredWithItsDeclaredDefaults) {
  buffer::BufferLayout layout{1000, 80, {buffer::PortSpec{}}};
  const auto p = make_policy("occamy", Params{}, PolicyEnv{.layout = &layout});
  EXPECT_EQ(p->params()["alpha"], 8.0);
  EXPECT_EQ(p->params()["speedup"], 1.0);
  EXPECT_EQ(p->params()["token_cap_bytes"], 1600);
  EXPECT_EQ(p->params()["victim"], "round_robin");
  EXPECT_EQ(p->params()["token_model"], "sharebuf");
  EXPECT_TRUE(p->reclaims());
  EXPECT_FALSE(make_policy("dt", Params{}, PolicyEnv{.layout = &layout})->reclaims());
}

}  // namespace
}  // namespace sharebuf::policies

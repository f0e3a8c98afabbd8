// Credence against its definition: thresholds are LQD's queue lengths (checked against an
// independent LQD model), the safeguard, the oracles, the forest loader.
#include "policies/credence.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "tests/policies/policy_harness.h"

namespace sharebuf::policies {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// LQD's queue lengths, written independently of CredencePolicy: a full buffer takes the arrival's
// cells from the longest queue (the arrival's own queue when it is among the longest).
struct LqdModel {
  std::vector<double> len;
  double capacity;
  void arrive(uint32_t i, double c) {
    double total = 0;
    for (double l : len)
      total += l;
    if (total + c > capacity) {
      double longest = len[i];
      uint32_t j = i;
      for (uint32_t q = 0; q < len.size(); ++q) {
        if (len[q] > longest) {
          longest = len[q];
          j = q;
        }
      }
      len[j] -= std::min(c, len[j]);
    }
    len[i] += c;
  }
  void depart(uint32_t i, double c) { len[i] -= std::min(c, len[i]); }
};

TEST(Credence, ThresholdsAreLqdQueueLengths) {
  const buffer::BufferLayout layout(
      200, 80, {buffer::PortSpec{.num_queues = 3}, buffer::PortSpec{.num_queues = 2}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout};
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CredencePolicy credence(Params{}, env);
    credence.on_install(view);
    LqdModel model{std::vector<double>(5, 0), 200};
    std::mt19937 rng(static_cast<uint32_t>(seed));
    for (int step = 0; step < 3000; ++step) {
      const auto q = static_cast<uint32_t>(rng() % 5);
      const auto c = static_cast<uint32_t>(1 + rng() % 6);
      // One clock instant for every event: no idle draining, so the model needs none.
      if (rng() % 3 != 0) {
        credence.admit({.now_ns = 1, .queue = q, .cells = c}, view);
        model.arrive(q, c);
      } else {
        credence.on_dequeue({.now_ns = 1, .queue = q, .cells = c}, view);
        model.depart(q, c);
      }
      double sum = 0;
      for (uint32_t k = 0; k < 5; ++k) {
        ASSERT_NEAR(credence.threshold(k), model.len[k], 1e-9)
            << "seed " << seed << " step " << step;
        sum += model.len[k];
      }
      ASSERT_NEAR(credence.gamma(), sum, 1e-9);
      ASSERT_LE(credence.gamma(), 200 + 1e-9);
    }
  }
}

// Decisions inside an RX worker's burst (begin_burst/end_burst: the lock taken once) are the
// same decisions: the thresholds still follow the LQD model step by step.
TEST(Credence, DecisionsInBurstsFollowLqdAsWithout) {
  const buffer::BufferLayout layout(
      200, 80, {buffer::PortSpec{.num_queues = 3}, buffer::PortSpec{.num_queues = 2}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout};
  CredencePolicy credence(Params{}, env);
  credence.on_install(view);
  LqdModel model{std::vector<double>(5, 0), 200};
  std::mt19937 rng(7);
  for (int burst = 0; burst < 500; ++burst) {
    const int n = 1 + static_cast<int>(rng() % 32);
    credence.begin_burst();
    for (int k = 0; k < n; ++k) {
      const auto q = static_cast<uint32_t>(rng() % 5);
      const auto c = static_cast<uint32_t>(1 + rng() % 6);
      credence.admit({.now_ns = 1, .queue = q, .cells = c}, view);
      model.arrive(q, c);
    }
    credence.end_burst();
    for (int k = 0; k < 3; ++k) {  // departures between bursts, as an egress worker makes them
      const auto q = static_cast<uint32_t>(rng() % 5);
      const auto c = static_cast<uint32_t>(1 + rng() % 6);
      credence.on_dequeue({.now_ns = 1, .queue = q, .cells = c}, view);
      model.depart(q, c);
    }
    double sum = 0;
    for (uint32_t k = 0; k < 5; ++k) {
      ASSERT_NEAR(credence.threshold(k), model.len[k], 1e-9) << "burst " << burst;
      sum += model.len[k];
    }
    ASSERT_NEAR(credence.gamma(), sum, 1e-9);
  }
}

// --- pipelines > 1 (docs/policies/credence.md, "Pipelines") ---

Params pipelines(int n) {
  Params p;
  p.values = {{"pipelines", n}};
  return p;
}

// One pipeline's arrivals alone: it is the one-pipeline algorithm over the whole buffer (the other
// pipeline publishes Gamma 0), so its thresholds follow the LQD model step by step.
TEST(CredencePipelines, OnePipelinesArrivalsAloneFollowLqdOverTheWholeBuffer) {
  const buffer::BufferLayout layout(
      200, 80, {buffer::PortSpec{.num_queues = 3}, buffer::PortSpec{.num_queues = 2}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout};
  CredencePolicy credence(pipelines(2), env);
  credence.on_install(view);
  LqdModel model{std::vector<double>(5, 0), 200};
  std::mt19937 rng(11);
  double most = 0;
  for (int step = 0; step < 3000; ++step) {
    const auto q = static_cast<uint32_t>(rng() % 5);
    const auto c = static_cast<uint32_t>(1 + rng() % 6);
    if (rng() % 3 != 0) {
      credence.admit({.now_ns = 1, .queue = q, .in_port = 1, .cells = c}, view);
      model.arrive(q, c);
    } else {
      credence.on_dequeue({.now_ns = 1, .queue = q, .in_port = 1, .cells = c}, view);
      model.depart(q, c);
    }
    for (uint32_t k = 0; k < 5; ++k)
      ASSERT_NEAR(credence.threshold(k), model.len[k], 1e-9) << "step " << step;
    most = std::max(most, credence.gamma());
  }
  EXPECT_NEAR(most, 200, 1e-9);  // it filled the whole virtual buffer
}

// The approximation, pinned: each pipeline's virtual push-out takes from its own highest
// threshold. Pipeline 0 puts 150 cells in queue 0; pipeline 1 then sends 100 to queue 1. One LQD
// over both would push 50 of queue 0's out (T = 100, 100); here pipeline 1's virtual buffer is
// full at 50 (B minus pipeline 0's published 150) and its own highest is queue 1 itself.
TEST(CredencePipelines, EachPipelinePushesOutOnlyItsOwnVirtualFrames) {
  const buffer::BufferLayout layout(200, 80, {buffer::PortSpec{.num_queues = 2}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout};
  for (const int n : {1, 2}) {
    CredencePolicy credence(pipelines(n), env);
    credence.on_install(view);
    for (int k = 0; k < 150; ++k)
      credence.admit({.now_ns = 1, .queue = 0, .in_port = 0, .cells = 1}, view);
    for (int k = 0; k < 100; ++k)
      credence.admit({.now_ns = 1, .queue = 1, .in_port = 1, .cells = 1}, view);
    EXPECT_DOUBLE_EQ(credence.threshold(0), n == 1 ? 100 : 150) << n << " pipelines";
    EXPECT_DOUBLE_EQ(credence.threshold(1), n == 1 ? 100 : 50) << n << " pipelines";
    EXPECT_DOUBLE_EQ(credence.gamma(), 200);
  }
}

// Step 3 with pipelines compares the cells the arrival's pipeline put in the queue (on_enqueue,
// less its departures, by in_port) with its own threshold, not the whole queue.
TEST(CredencePipelines, ThresholdsCompareWithThePipelinesOwnCells) {
  const buffer::BufferLayout layout(100, 80, {buffer::PortSpec{.num_queues = 2}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout};
  CredencePolicy credence(pipelines(2), env);
  credence.on_install(view);
  // Pipeline 0 fills queue 0 to 60 cells (accepted: the safeguard, B/N = 50, then T > Q).
  for (int k = 0; k < 60; ++k) {
    const ArrivalContext a{.now_ns = 1, .queue = 0, .in_port = 0, .cells = 1};
    ASSERT_TRUE(credence.admit(a, view).accepted()) << k;
    ASSERT_TRUE(state.try_reserve(0, 1));
    credence.on_enqueue(a, view);
  }
  // Pipeline 1's first frame for queue 0: its T[0] is 1 and it has no cells there: accepted,
  // although the queue holds 60 (one threshold over both pipelines' cells would refuse it).
  const ArrivalContext b{.now_ns = 1, .queue = 0, .in_port = 1, .cells = 1};
  EXPECT_TRUE(credence.admit(b, view).accepted());
  ASSERT_TRUE(state.try_reserve(0, 1));
  credence.on_enqueue(b, view);
  // Its second: 1 cell of its own against T[0] = 2: accepted.
  EXPECT_TRUE(credence.admit(b, view).accepted());
  // Departures are charged by in_port: pipeline 0's 60 leave, pipeline 1's cells stay counted.
  for (int k = 0; k < 60; ++k) {
    state.release(0, 1);
    credence.on_dequeue({.now_ns = 1, .queue = 0, .in_port = 0, .cells = 1}, view);
  }
  const nlohmann::json d = credence.describe(view);
  EXPECT_EQ(d["state"]["pipelines"][0]["own_cells"][0], 0);
  EXPECT_EQ(d["state"]["pipelines"][1]["own_cells"][0], 1);
  EXPECT_DOUBLE_EQ(d["state"]["pipelines"][1]["lqd_thresholds_cells"][0].get<double>(), 2);
  state.release(0, 1);
}

// A pipeline that has gone quiet keeps what it published; the next pipeline to find the virtual
// buffer full drains it (its lock is free) after a base RTT, so it does not hold the others down.
TEST(CredencePipelines, AnIdlePipelineIsDrainedByTheOthers) {
  const buffer::BufferLayout layout(200, 80, {buffer::PortSpec{}, buffer::PortSpec{}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  // 1 Gbit/s, 80-byte cells: 1.5625 cells/us per port, half of it per pipeline.
  const PolicyEnv env{.layout = &layout, .port_rate_bps = {1'000'000'000, 1'000'000'000}};
  CredencePolicy credence(pipelines(2), env);
  credence.on_install(view);
  for (int k = 0; k < 100; ++k)  // refused or not, pipeline 1's T[1] grows; queue 1 stays empty
    credence.admit({.now_ns = 1'000, .queue = 1, .in_port = 1, .cells = 1}, view);
  // 1 ms later (100 cells drain in 128 us) pipeline 0 fills the buffer from port 0's queue.
  for (int k = 0; k < 200; ++k)
    credence.admit({.now_ns = 1'001'000, .queue = 0, .in_port = 0, .cells = 1}, view);
  EXPECT_DOUBLE_EQ(credence.threshold(1), 0);
  EXPECT_DOUBLE_EQ(credence.threshold(0), 200);
}

// Two RX threads deciding in bursts (with pipelines, one per pipeline), a third whose bursts mix
// both pipelines' ports (a worker that serves both), and an egress thread departing at once: no
// deadlock, and the books stay exact: each pipeline's Gamma is the sum of its thresholds, within
// B, and the total is their sum. Run under TSan in CI.
TEST(CredencePipelines, BurstsOnThreadsBesideDeparturesKeepTheBooks) {
  const buffer::BufferLayout layout(
      300, 80, {buffer::PortSpec{.num_queues = 4}, buffer::PortSpec{.num_queues = 4}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout};
  for (const int n : {1, 2}) {
    CredencePolicy credence(pipelines(n), env);
    credence.on_install(view);
    std::atomic<int> rx_done{0};
    std::atomic<int> accepted{0};
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 3; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(t + 3);
        for (int burst = 0; burst < 2000; ++burst) {
          credence.begin_burst();
          for (int k = 0; k < 16; ++k) {
            const ArrivalContext a{.now_ns = 1,
                                   .queue = static_cast<uint32_t>(rng() % 8),
                                   .in_port = static_cast<uint16_t>(t < 2 ? t : rng() % 2),
                                   .cells = static_cast<uint32_t>(1 + rng() % 4)};
            if (credence.admit(a, view).accepted()) {
              credence.on_enqueue(a, view);
              accepted.fetch_add(1, std::memory_order_relaxed);
            }
          }
          credence.end_burst();
        }
        rx_done.fetch_add(1);
      });
    }
    threads.emplace_back([&] {
      std::mt19937 rng(99);
      while (rx_done.load() < 3)
        credence.on_dequeue({.now_ns = 1,
                             .queue = static_cast<uint32_t>(rng() % 8),
                             .in_port = static_cast<uint16_t>(rng() % 2),
                             .cells = 2},
                            view);
    });
    for (auto& th : threads)
      th.join();
    const nlohmann::json d = credence.describe(view);
    double sum = 0;
    for (uint32_t q = 0; q < 8; ++q)
      sum += credence.threshold(q);
    EXPECT_NEAR(credence.gamma(), sum, 1e-9) << n << " pipelines";
    // Something was decided. Not Gamma > 0 at the end: the departing thread runs until the last
    // RX thread is done and may drain every threshold to 0 meanwhile (it did under TSan).
    EXPECT_GT(accepted.load(), 0) << n << " pipelines";
    if (n == 1) {
      EXPECT_LE(credence.gamma(), 300 + 1e-9);
      continue;
    }
    ASSERT_EQ(d["state"]["pipelines"].size(), 2u);
    for (const auto& pipe : d["state"]["pipelines"]) {
      double own = 0;
      for (const auto& t : pipe["lqd_thresholds_cells"])
        own += t.get<double>();
      EXPECT_NEAR(pipe["gamma_cells"].get<double>(), own, 1e-9);
      EXPECT_LE(own, 300 + 1e-9);
    }
  }
}

TEST(CredencePipelines, OutOfRangeCountsAreRefused) {
  const buffer::BufferLayout layout(100, 80, {buffer::PortSpec{}});
  const PolicyEnv env{.layout = &layout};
  EXPECT_THROW(CredencePolicy(pipelines(0), env), std::exception);
  EXPECT_THROW(CredencePolicy(pipelines(65), env), std::exception);
  EXPECT_EQ(CredencePolicy(pipelines(4), env).pipelines(), 4u);
}

class CredenceHarness : public testing::PolicyHarness {
 protected:
  void build_credence(nlohmann::json params) {
    build({.capacity_cells = 100, .ports = {buffer::PortSpec{.num_queues = 4}}}, "credence",
          std::move(params));
  }
};

// An oracle that predicts a drop every time (flip with probability 1 over "none").
const nlohmann::json kAlwaysDrop = {{"oracle", "flip"}, {"flip_probability", 1.0}};

TEST_F(CredenceHarness, BelowBOverNEverythingIsAcceptedWhateverTheOracle) {
  build_credence(kAlwaysDrop);
  // B/N = 25: while the longest queue holds fewer than 25 cells every arrival is accepted.
  for (int round = 0; round < 24; ++round) {
    for (uint32_t q = 0; q < 4; ++q)
      EXPECT_TRUE(offer(q, 1)) << "round " << round;
  }
  EXPECT_TRUE(offer(0, 1));  // the longest held 24: accepted, q0 now holds 25 = B/N
  // The safeguard no longer applies: the oracle (always "drop") decides.
  EXPECT_FALSE(offer(1, 1));
  EXPECT_EQ(last_.reason, buffer::DropReason::kPrediction);
}

TEST_F(CredenceHarness, AlwaysDropOracleStillKeepsTheSafeguardShare) {
  build_credence(kAlwaysDrop);
  uint64_t transmitted = 0;
  for (int i = 0; i < 5000; ++i) {
    offer(0, 1);
    offer(0, 1);
    if (depart(0)) ++transmitted;
  }
  // The queue never falls below the safeguard's B/N - 1 once filled, so the port transmits on
  // every departure opportunity: at least 1/N of what any policy could (here: all of them).
  EXPECT_GE(occupancy(0), 24u);
  EXPECT_GE(transmitted, 4990u);
}

// FollowLQD (oracle none, safeguard off) drops what LQD would push out, where CS would accept it:
// q0 fills the buffer; 50 arrivals to q1 move 50 cells of LQD's virtual buffer from q0 to q1;
// after q0 sends 50 frames, T[0] is 0 while q0 still holds 50 cells, so q0's arrivals are over
// its threshold although 50 cells are free, and q1's (T[1] = 50) are accepted.
TEST_F(CredenceHarness, NoneOracleFollowsLqdWhereCsWouldNot) {
  build_credence({{"oracle", "none"}, {"safeguard", false}});
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(offer(0, 1));
  for (int i = 0; i < 50; ++i)
    EXPECT_FALSE(offer(1, 1));  // the buffer is full
  for (int i = 0; i < 50; ++i)
    ASSERT_TRUE(depart(0));
  int q0 = 0;
  int q1 = 0;
  for (int i = 0; i < 10; ++i) {
    q0 += offer(0, 1) ? 1 : 0;
    EXPECT_EQ(last_.reason, buffer::DropReason::kThreshold);
    q1 += offer(1, 1) ? 1 : 0;
  }
  EXPECT_EQ(q0, 0);   // CS: 10
  EXPECT_EQ(q1, 10);  // CS: 10
  // 50 + 10 cells, less what q1's idle virtual queue sent over the harness's 1-ns steps at the
  // default 10 Gbit/s (under a cell).
  EXPECT_NEAR(dynamic_cast<CredencePolicy&>(*policy_).threshold(1), 60, 1);
}

// The step-4 drop of a frame that does not fit is pool_full: the buffer is full (q0), and an
// arrival to q1 gets a threshold of 1 cell from LQD's virtual buffer but no room.
TEST_F(CredenceHarness, AFrameThatDoesNotFitIsPoolFull) {
  build_credence({{"oracle", "none"}});
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(offer(0, 1));
  EXPECT_FALSE(offer(1, 1));
  EXPECT_EQ(last_.reason, buffer::DropReason::kPoolFull);
  // With one cell free, q0 (99 cells, T[0] = 99 after the departure and this arrival) is over
  // its threshold: that drop is the threshold's.
  ASSERT_TRUE(depart(0));
  EXPECT_FALSE(offer(0, 1));
  EXPECT_EQ(last_.reason, buffer::DropReason::kThreshold);
}

// The idle queues of one port drain together at the port's line rate, shared by its scheduler
// (1 Gbit/s, 80-byte cells: 1.5625 cells/us, so 32 us send 50 cells).
PolicyEnv two_queue_port(const buffer::BufferLayout& layout, SchedulingKind kind,
                         std::vector<uint32_t> weights = {}) {
  return PolicyEnv{.layout = &layout,
                   .port_rate_bps = {1'000'000'000},
                   .port_scheduling = {PortScheduling{kind, std::move(weights)}}};
}

struct PortDrain {
  double t0, t1;
};
// T[0] and T[1] start at `t0`, `t1` (real queues empty; `busy0` makes real queue 0 non-empty)
// at 1 us; returns both thresholds at 33 us, read by an arrival of 0 cells to each.
PortDrain drain(SchedulingKind kind, std::vector<uint32_t> weights, int t0, int t1,
                bool busy0 = false) {
  const buffer::BufferLayout layout(1000, 80, {buffer::PortSpec{.num_queues = 2}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  CredencePolicy c(Params{}, two_queue_port(layout, kind, std::move(weights)));
  c.on_install(view);
  for (int k = 0; k < t0; ++k)
    c.admit({.now_ns = 1'000, .queue = 0, .cells = 1}, view);
  for (int k = 0; k < t1; ++k)
    c.admit({.now_ns = 1'000, .queue = 1, .cells = 1}, view);
  if (busy0) {
    EXPECT_TRUE(state.try_reserve(0, 5));
  }
  c.admit({.now_ns = 33'000, .queue = 0, .cells = 0}, view);
  const PortDrain out{c.threshold(0), c.threshold(1)};
  if (busy0) state.release(0, 5);
  return out;
}

TEST(Credence, IdleQueuesOfAPortShareItsLineRate) {
  // Round robin: 25 cells each (each queue draining at the whole line rate would give 50 each).
  PortDrain d = drain(SchedulingKind::kRoundRobin, {}, 100, 100);
  EXPECT_DOUBLE_EQ(d.t0, 75);
  EXPECT_DOUBLE_EQ(d.t1, 75);
  // Strict priority: queue 0 first.
  d = drain(SchedulingKind::kStrictPriority, {}, 100, 100);
  EXPECT_DOUBLE_EQ(d.t0, 50);
  EXPECT_DOUBLE_EQ(d.t1, 100);
  // DRR 3:1.
  d = drain(SchedulingKind::kDrr, {3, 1}, 100, 100);
  EXPECT_DOUBLE_EQ(d.t0, 62.5);
  EXPECT_DOUBLE_EQ(d.t1, 87.5);
  // Water-filling: queue 0 empties after 20 cells (10 each), then queue 1 gets the other 30.
  d = drain(SchedulingKind::kRoundRobin, {}, 10, 100);
  EXPECT_DOUBLE_EQ(d.t0, 0);
  EXPECT_DOUBLE_EQ(d.t1, 60);
  // A busy real queue takes its share through its departures: the idle one drains at half rate.
  d = drain(SchedulingKind::kRoundRobin, {}, 100, 100, /*busy0=*/true);
  EXPECT_DOUBLE_EQ(d.t0, 100);
  EXPECT_DOUBLE_EQ(d.t1, 75);
  // Strict priority under a busy queue 0: queue 1 gets nothing.
  d = drain(SchedulingKind::kStrictPriority, {}, 100, 100, /*busy0=*/true);
  EXPECT_DOUBLE_EQ(d.t1, 100);
}

// A queue's feature average forgets by the time since that queue's own previous arrival: a queue
// last seen 20 us (two base RTTs) ago takes its new length at full weight, however busy the
// other queues were meanwhile (with one clock for all, the weight would be 1 us / 10 us).
TEST(CredenceFeatures, QueueAveragesUseTheirOwnElapsedTime) {
  CredenceFeatures f(2, 10'000);
  double out[kOracleFeatures];
  f.observe(1'000, 1, 10, 10, out);
  double total = 10;  // the total's average, sampled at every arrival: 1 us apart, weight 0.1
  for (uint64_t t = 2'000; t <= 20'000; t += 1'000) {
    f.observe(t, 0, 5, 15, out);
    total += 0.1 * (15 - total);
  }
  f.observe(21'000, 1, 50, 60, out);
  EXPECT_DOUBLE_EQ(out[2], 50);
  EXPECT_NEAR(out[3], total + 0.1 * (60 - total), 1e-12);
  // And a queue sampled again 1 us later moves by a tenth.
  f.observe(22'000, 1, 60, 60, out);
  EXPECT_DOUBLE_EQ(out[2], 51);
}

// LQD's virtual queue keeps transmitting while the real queue is empty: a threshold credited for
// refused frames drains at line rate (1 Gbit/s, 80-byte cells: 1.5625 cells/us), and a queue that
// empties drains from the moment it emptied.
TEST(Credence, IdleThresholdsDrainAtLineRate) {
  const buffer::BufferLayout layout(1000, 80, {buffer::PortSpec{}, buffer::PortSpec{}});
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  const PolicyEnv env{.layout = &layout, .port_rate_bps = {1'000'000'000, 1'000'000'000}};
  CredencePolicy c(Params{}, env);
  c.on_install(view);
  for (int k = 0; k < 100; ++k)  // refused or not, T[0] grows; the real queue stays empty
    c.admit({.now_ns = 1'000, .queue = 0, .cells = 1}, view);
  EXPECT_DOUBLE_EQ(c.threshold(0), 100);
  // 32 us later the virtual queue has sent 50 cells; the next arrival sees T = 50 + 1.
  c.admit({.now_ns = 33'000, .queue = 0, .cells = 1}, view);
  EXPECT_DOUBLE_EQ(c.threshold(0), 51);
  // Queue 1 holds frames: no idle drain while it is busy, departures lower T instead.
  ASSERT_TRUE(state.try_reserve(1, 10));
  for (int k = 0; k < 10; ++k)
    c.admit({.now_ns = 33'000, .queue = 1, .cells = 1}, view);
  c.admit({.now_ns = 97'000, .queue = 1, .cells = 0}, view);
  EXPECT_DOUBLE_EQ(c.threshold(1), 10);
  state.release(1, 4);
  c.on_dequeue({.now_ns = 97'000, .queue = 1, .cells = 4}, view);
  EXPECT_DOUBLE_EQ(c.threshold(1), 6);
  state.release(1, 6);
  c.on_dequeue({.now_ns = 100'000, .queue = 1, .cells = 2}, view);  // empties at 100 us with T 4
  // When the virtual buffer is full every draining threshold is brought up to date: fill it from
  // queue 0 at 101.28 us, when T[1] should have drained 2 cells, and T[0] fully.
  ASSERT_TRUE(state.try_reserve(0, 1));  // a busy real queue 0: its T only grows
  for (int k = 0; k < 995; ++k)
    c.admit({.now_ns = 101'280, .queue = 0, .cells = 1}, view);
  EXPECT_DOUBLE_EQ(c.threshold(1), 2);
  EXPECT_DOUBLE_EQ(c.gamma(), c.threshold(0) + c.threshold(1));
  state.release(0, 1);
}

TEST(MaxTree, TracksTheLargestValueThroughChanges) {
  MaxTree t(5);
  EXPECT_EQ(t.max(), 0);
  t.set(3, 7);
  t.set(1, 7);
  EXPECT_EQ(t.max(), 7);
  EXPECT_EQ(t.argmax(), 1u);  // ties: the lower index
  t.set(1, 2);
  EXPECT_EQ(t.argmax(), 3u);
  t.set(4, 9);
  EXPECT_EQ(t.argmax(), 4u);
  t.set(4, 0);
  t.set(3, 0);
  EXPECT_EQ(t.argmax(), 1u);
  MaxTree one(1);
  one.set(0, 3);
  EXPECT_EQ(one.argmax(), 0u);
  EXPECT_EQ(one.max(), 3);
}

TEST(MaxTree, AgreesWithAScanOnRandomChanges) {
  // Few distinct values, so ties are frequent: the lowest index among the highest must win.
  for (uint32_t n : {1u, 2u, 3u, 7u, 8u, 33u}) {
    std::mt19937 rng(n);
    std::uniform_int_distribution<uint32_t> index(0, n - 1);
    std::uniform_int_distribution<uint64_t> value(0, 4);
    MaxTree tree(n);
    std::vector<uint64_t> values(n, 0);
    for (int step = 0; step < 2000; ++step) {
      const uint32_t i = index(rng);
      values[i] = value(rng) * (MaxTree::kMaxValue / 4);  // the largest is kMaxValue
      tree.set(i, values[i]);
      const auto best = std::max_element(values.begin(), values.end());  // first of the highest
      ASSERT_EQ(tree.max(), *best) << "n " << n << " step " << step;
      ASSERT_EQ(tree.argmax(), static_cast<uint32_t>(best - values.begin()))
          << "n " << n << " step " << step;
      ASSERT_EQ(tree[i], values[i]);
    }
  }
}

TEST(MaxTree, HoldsUpToKMaxSizeValues) {
  MaxTree full(MaxTree::kMaxSize);
  full.set(MaxTree::kMaxSize - 1, 1);
  EXPECT_EQ(full.argmax(), MaxTree::kMaxSize - 1);
  full.set(0, 1);
  EXPECT_EQ(full.argmax(), 0u);
  EXPECT_THROW(MaxTree(MaxTree::kMaxSize + 1), std::invalid_argument);
}

TEST(Credence, FlipIsReproducibleBySeed) {
  const buffer::BufferLayout layout(100, 80, {buffer::PortSpec{.num_queues = 2}});
  buffer::BufferState state(layout);
  ASSERT_TRUE(state.try_reserve(0, 60));  // above B/N = 50: the oracle is consulted
  const auto view = buffer::BufferView::exact(state);
  auto run = [&](uint64_t seed) {
    Params p;
    p.values = {{"oracle", "flip"}, {"flip_probability", 0.5}, {"seed", seed}};
    CredencePolicy c(p, PolicyEnv{.layout = &layout});
    c.on_install(view);
    std::string verdicts;
    for (int i = 0; i < 200; ++i) {
      const Verdict v = c.admit({.now_ns = 1, .queue = 1, .cells = 1}, view);
      verdicts += v.accepted() ? 'a' : 'd';
      c.on_dequeue({.now_ns = 1, .queue = 1, .cells = 1}, view);
    }
    return verdicts;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
  state.release(0, 60);
}

std::string write_model(const std::string& text) {
  char name[] = "/tmp/sharebuf-forest-XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  std::FILE* f = fdopen(fd, "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return name;
}

constexpr RandomForest::Kernel kKernels[] = {RandomForest::Kernel::kAuto,
                                             RandomForest::Kernel::kWalk};

TEST(RandomForest, PredictsAHandBuiltTree) {
  // Tree 0: queue length <= 50 ? accept (0.1) : (total <= 900 ? 0.6 : 0.9)
  // Tree 1: always 0.2.  Mean > 0.5 means drop.
  const nlohmann::json model = nlohmann::json::parse(R"([
    [{"feature": 0, "threshold": 50, "left": 1, "right": 2, "value": 0},
     {"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 0.1},
     {"feature": 1, "threshold": 900, "left": 3, "right": 4, "value": 0},
     {"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 0.6},
     {"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 0.9}],
    [{"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 0.2}]
  ])");
  for (const auto kernel : kKernels) {
    const RandomForest f = RandomForest::from_json(model, "test", kernel);
    SCOPED_TRACE(f.kernel());
    EXPECT_EQ(f.trees(), 2u);
    EXPECT_DOUBLE_EQ(f.score({10, 2000, 0, 0}), 0.15);
    EXPECT_DOUBLE_EQ(f.score({50, 2000, 0, 0}), 0.15);  // <= goes left
    EXPECT_DOUBLE_EQ(f.score({51, 900, 0, 0}), 0.4);
    EXPECT_FALSE(f.predicts_drop({51, 900, 0, 0}));
    EXPECT_DOUBLE_EQ(f.score({51, 901, 0, 0}), 0.55);
    EXPECT_TRUE(f.predicts_drop({51, 901, 0, 0}));
  }
}

// The vector kernel where the CPU has AVX2 and the forest is at most kMaxLaneDepth deep, the
// portable walk otherwise or when asked for.
TEST(RandomForest, PicksTheVectorKernelWhereItApplies) {
  // A left spine `depth` levels deep: inner node 2d tests feature d % 4 against 10 - d, goes
  // right to a leaf of value 1 and left on down, to a final leaf of value 0.
  auto spine = [](int depth) {
    nlohmann::json nodes = nlohmann::json::array();
    for (int d = 0; d < depth; ++d) {
      nodes.push_back({{"feature", d % 4},
                       {"threshold", 10 - d},
                       {"left", 2 * d + 2},
                       {"right", 2 * d + 1},
                       {"value", 0}});
      nodes.push_back(
          {{"feature", -1}, {"threshold", 0}, {"left", -1}, {"right", -1}, {"value", 1}});
    }
    nodes.push_back({{"feature", -1}, {"threshold", 0}, {"left", -1}, {"right", -1}, {"value", 0}});
    return nlohmann::json::array({nodes});
  };
#if defined(__x86_64__)
  const std::string vector = __builtin_cpu_supports("avx2") ? "avx2" : "walk";
#else
  const std::string vector = "walk";
#endif
  EXPECT_EQ(RandomForest::from_json(spine(1), "m").kernel(), vector);
  EXPECT_EQ(RandomForest::from_json(spine(RandomForest::kMaxLaneDepth), "m").kernel(), vector);
  EXPECT_STREQ(RandomForest::from_json(spine(RandomForest::kMaxLaneDepth + 1), "m").kernel(),
               "walk");
  EXPECT_STREQ(RandomForest::from_json(spine(4), "m", RandomForest::Kernel::kWalk).kernel(),
               "walk");
  // A single leaf (depth 0) has nothing to compare.
  EXPECT_STREQ(RandomForest::from_json(spine(0), "m").kernel(), "walk");
  for (const auto kernel : kKernels) {
    const RandomForest f = RandomForest::from_json(spine(RandomForest::kMaxLaneDepth), "m", kernel);
    SCOPED_TRACE(f.kernel());
    EXPECT_EQ(f.score({0, 0, 0, 0}), 0.0);
    EXPECT_EQ(f.score({6, 5, 8, 7}), 0.0);    // equal to the thresholds below the root: left
    EXPECT_EQ(f.score({0, 9.5, 0, 0}), 1.0);  // right at level 1
    EXPECT_EQ(f.score({6, 5, 8, 7.5}), 1.0);  // level 3
    EXPECT_EQ(f.score({6.5, 5, 8, 7}), 1.0);  // level 4
    EXPECT_EQ(f.score({6, 5.5, 8, 7}), 1.0);  // level 5, the deepest
  }
  EXPECT_EQ(RandomForest::from_json(spine(0), "m").score({5, 5, 5, 5}), 0.0);
}

TEST(RandomForest, ComparesLikeScikitLearnInFloat32) {
  // scikit-learn compares float32(x) <= threshold (a double). 0.1 is not a float: float32(0.1)
  // is 0.100000001..., above the double 0.1, so x = 0.1 goes right; the largest float below 0.1
  // goes left.
  const nlohmann::json model = nlohmann::json::parse(R"([
    [{"feature": 2, "threshold": 0.1, "left": 1, "right": 2, "value": 0},
     {"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 0},
     {"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 1}]])");
  for (const auto kernel : kKernels) {
    const RandomForest f = RandomForest::from_json(model, "test", kernel);
    SCOPED_TRACE(f.kernel());
    EXPECT_EQ(f.score({0, 0, 0.1, 0}), 1.0);
    const double below = std::nextafter(0.1f, 0.0f);
    EXPECT_EQ(f.score({0, 0, below, 0}), 0.0);
    // Doubles that round to float32(0.1) go right with it; 0.09999999 rounds below 0.1.
    EXPECT_EQ(f.score({0, 0, 0.1000000001, 0}), 1.0);
    EXPECT_EQ(f.score({0, 0, 0.0999999, 0}), 0.0);
  }
}

// The reference walk: the model's nodes followed one by one, as scikit-learn does.
double reference_score(const nlohmann::json& model, const double (&x)[kOracleFeatures]) {
  double sum = 0;
  for (const auto& tree : model) {
    size_t n = 0;
    while (tree[n]["feature"].get<int>() >= 0) {
      const float v = static_cast<float>(x[tree[n]["feature"].get<int>()]);
      n = tree[n][v <= tree[n]["threshold"].get<double>() ? "left" : "right"].get<size_t>();
    }
    sum += tree[n]["value"].get<double>();
  }
  return sum / static_cast<double>(model.size());
}

// A random tree of uneven depth (leaves anywhere from depth 1 to max_depth), nodes in
// depth-first order so children follow their parent.
int uniform(std::mt19937& rng, int n) {
  return std::uniform_int_distribution<int>(0, n - 1)(rng);
}

void random_subtree(std::mt19937& rng, nlohmann::json& nodes, int depth, int max_depth) {
  const size_t at = nodes.size();
  const bool leaf = depth == max_depth || (depth > 0 && uniform(rng, 3) == 0);
  if (leaf) {
    nodes.push_back({{"feature", -1},
                     {"threshold", 0},
                     {"left", -1},
                     {"right", -1},
                     {"value", uniform(rng, 1001) / 1000.0}});  // sums round: order counts
    return;
  }
  nodes.push_back({{"feature", uniform(rng, kOracleFeatures)},
                   {"threshold", uniform(rng, 100000) / 7.0},
                   {"left", 0},
                   {"right", 0},
                   {"value", 0}});
  nodes[at]["left"] = nodes.size();
  random_subtree(rng, nodes, depth + 1, max_depth);
  nodes[at]["right"] = nodes.size();
  random_subtree(rng, nodes, depth + 1, max_depth);
}

TEST(RandomForest, AgreesWithANodeByNodeWalkOnRandomForests) {
  std::mt19937 rng(11);
  for (int trees : {1, 3, 4, 5, 6, 9}) {  // the deepest tree: min(trees, 7) levels
    nlohmann::json model = nlohmann::json::array();
    for (int t = 0; t < trees; ++t) {
      nlohmann::json nodes = nlohmann::json::array();
      random_subtree(rng, nodes, 0, 1 + t % 7);
      model.push_back(nodes);
    }
    for (const auto kernel : kKernels) {
      const RandomForest f = RandomForest::from_json(model, "random", kernel);
      for (int i = 0; i < 500; ++i) {
        const double x[kOracleFeatures] = {uniform(rng, 150000) / 10.0, uniform(rng, 150000) / 10.0,
                                           uniform(rng, 150000) / 10.0,
                                           uniform(rng, 150000) / 10.0};
        // Exactly equal: both kernels add the trees' values in order, as the reference does.
        ASSERT_EQ(f.score(x), reference_score(model, x))
            << f.kernel() << " trees " << trees << " i " << i;
        ASSERT_EQ(f.predicts_drop(x), reference_score(model, x) > 0.5);
      }
    }
  }
}

TEST(RandomForest, RefusesTreesDeeperThanTheLimit) {
  // A left spine 17 levels deep: inner node 2d goes left to the next inner node (or the final
  // leaf, value 0) and right to leaf 2d+1 (value 1).
  const int depth = RandomForest::kMaxDepth + 1;
  nlohmann::json chain = nlohmann::json::array();
  for (int d = 0; d < depth; ++d) {
    chain.push_back({{"feature", 0},
                     {"threshold", d},
                     {"left", 2 * d + 2},
                     {"right", 2 * d + 1},
                     {"value", 0}});
    chain.push_back({{"feature", -1}, {"threshold", 0}, {"left", -1}, {"right", -1}, {"value", 1}});
  }
  chain.push_back({{"feature", -1}, {"threshold", 0}, {"left", -1}, {"right", -1}, {"value", 0}});
  const nlohmann::json model = nlohmann::json::array({chain});
  EXPECT_THAT(
      [&] { RandomForest::from_json(model, "deep.json"); },
      ThrowsMessage<ConfigError>(HasSubstr("deep.json: forest model: tree 0: deeper than 16")));
  nlohmann::json shallower = chain;  // 16 levels: accepted
  shallower.erase(shallower.end() - 3, shallower.end());
  shallower.push_back(
      {{"feature", -1}, {"threshold", 0}, {"left", -1}, {"right", -1}, {"value", 0}});
  shallower[static_cast<size_t>(2 * depth - 4)]["left"] = shallower.size() - 1;
  const RandomForest f = RandomForest::from_json(nlohmann::json::array({shallower}), "ok");
  EXPECT_EQ(f.depth(), RandomForest::kMaxDepth);
  EXPECT_EQ(f.score({0, 0, 0, 0}), 0.0);    // 0 <= every threshold: down the left spine
  EXPECT_EQ(f.score({0.5, 0, 0, 0}), 1.0);  // 0.5 > 0: right at the root
}

TEST(RandomForest, MalformedModelsAreRejectedClearly) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "non-empty array of trees"},
      {R"([[]])", "tree 0: must be a non-empty array"},
      {R"([[{"feature": 0, "threshold": 1, "left": 0, "right": 1, "value": 0}]])",
       "tree 0 node 0: children must be nodes after this one"},
      {R"([[{"feature": 7, "threshold": 1, "left": 1, "right": 2, "value": 0}]])",
       "feature must be -1 (leaf) or 0..3"},
      {R"([[{"feature": -1, "threshold": 0, "left": -1, "right": -1}]])", "missing key 'value'"},
      {R"([[{"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 2}]])",
       "leaf value must be within 0..1"},
      {R"([[{"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 0, "x": 1}]])",
       "unknown key 'x'"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_THAT([&] { RandomForest::from_json(nlohmann::json::parse(text), "m.json"); },
                ThrowsMessage<ConfigError>(HasSubstr(message)))
        << text;
  }
  EXPECT_THAT([] { RandomForest::from_file("/nonexistent/model.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("cannot open")));
  const std::string bad = write_model("not json");
  EXPECT_THAT([&] { RandomForest::from_file(bad); },
              ThrowsMessage<ConfigError>(HasSubstr("not valid JSON")));
  std::remove(bad.c_str());
}

TEST(Credence, ForestOracleLoadsTheShippedModelOrAGivenOne) {
  const buffer::BufferLayout layout(100, 80, {buffer::PortSpec{.num_queues = 2}});
  const PolicyEnv env{.layout = &layout};
  Params p;
  p.values = {{"oracle", "forest"}};
  {
    CredencePolicy shipped(p, env);  // data/credence-forest.json: 4 trees
    EXPECT_EQ(shipped.params()["model"].get<std::string>().find("data/credence-forest.json") !=
                  std::string::npos,
              true);
    EXPECT_EQ(shipped.describe(buffer::BufferView::exact(
                  buffer::BufferState(layout)))["state"]["forest"]["trees"],
              4);
  }
  p.values["model"] = "/nonexistent/model.json";
  EXPECT_THAT([&] { CredencePolicy c(p, env); },
              ThrowsMessage<ConfigError>(HasSubstr("cannot open the forest model")));
  // A forest that predicts a drop whenever the queue holds more than 30 cells.
  const std::string path = write_model(R"([[
    {"feature": 0, "threshold": 30, "left": 1, "right": 2, "value": 0},
    {"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 0},
    {"feature": -1, "threshold": 0, "left": -1, "right": -1, "value": 1}]])");
  p.values["model"] = path;
  CredencePolicy c(p, env);
  buffer::BufferState state(layout);
  const auto view = buffer::BufferView::exact(state);
  c.on_install(view);
  ASSERT_TRUE(state.try_reserve(1, 51));  // past B/N: the oracle decides
  ASSERT_TRUE(state.try_reserve(0, 20));
  for (int i = 0; i < 40; ++i)
    c.admit({.now_ns = 1, .queue = 0, .cells = 1}, view);  // T[0] grows
  EXPECT_TRUE(c.admit({.now_ns = 1, .queue = 0, .cells = 1}, view).accepted());
  ASSERT_TRUE(state.try_reserve(0, 11));  // 31 cells > 30
  EXPECT_EQ(c.admit({.now_ns = 1, .queue = 0, .cells = 1}, view),
            Verdict::drop(buffer::DropReason::kPrediction));
  EXPECT_EQ(c.describe(view)["state"]["forest"]["trees"], 1);
  state.release(0, 31);
  state.release(1, 51);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sharebuf::policies

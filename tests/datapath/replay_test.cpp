#include "datapath/replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "datapath/replay_scenarios.h"
#include "policies/params.h"

namespace sharebuf::datapath {
namespace {

using buffer::DropReason;

uint64_t dropped(const QueueReport& q, DropReason r) {
  return q.dropped[static_cast<size_t>(r)];
}

TEST(Replay, IsDeterministic) {
  const ReplayScenario sc = burst_scenario();
  const auto a = run_replay(sc.setup, "dt", {}, sc.arrivals, sc.end_ns);
  const auto b = run_replay(sc.setup, "dt", {}, sc.arrivals, sc.end_ns);
  ASSERT_EQ(a.queues.size(), b.queues.size());
  for (size_t q = 0; q < a.queues.size(); ++q) {
    EXPECT_EQ(a.queues[q].enqueued, b.queues[q].enqueued);
    EXPECT_EQ(a.queues[q].transmitted, b.queues[q].transmitted);
    EXPECT_EQ(a.queues[q].peak_cells, b.queues[q].peak_cells);
  }
}

// The burst scenario tells the story the demo prints: CS lets the long flows hog the buffer and
// the incast loses frames to pool_full; DT keeps room so the incast gets more in; static caps
// every queue at B/4.
TEST(Replay, BurstScenarioSeparatesThePolicies) {
  const ReplayScenario sc = burst_scenario();
  const auto cs = run_replay(sc.setup, "cs", {}, sc.arrivals, sc.end_ns);
  const auto dt = run_replay(sc.setup, "dt", {}, sc.arrivals, sc.end_ns);
  const auto st = run_replay(sc.setup, "static", {}, sc.arrivals, sc.end_ns);
  for (const auto* r : {&cs, &dt, &st}) {
    EXPECT_THAT(r->accounting_errors, ::testing::IsEmpty()) << r->policy;
    EXPECT_EQ(r->queues[2].arrivals, 400u);
    EXPECT_EQ(r->queues[3].arrivals, 0u);
  }
  EXPECT_GT(dropped(cs.queues[2], DropReason::kPoolFull), 0u);
  EXPECT_GT(cs.peak_total_cells, 2000u - 19u);  // full to within one 19-cell frame
  EXPECT_GT(dt.queues[2].enqueued, cs.queues[2].enqueued);
  EXPECT_LE(st.queues[0].peak_cells, 500u);
  EXPECT_LE(st.queues[2].peak_cells, 500u);
  // DT with alpha 1 and two saturated queues: each holds about B / 3 before the burst.
  EXPECT_NEAR(dt.queues[0].peak_cells, 2000.0 / 3, 40);
}

TEST(Replay, BadPolicyParametersAreRejected) {
  const ReplayScenario sc = burst_scenario();
  policies::Params p;
  p.values = {{"alpha", -1}};
  EXPECT_THROW(run_replay(sc.setup, "dt", p, sc.arrivals, sc.end_ns), policies::ConfigError);
  EXPECT_THROW(make_scenario("nope"), std::invalid_argument);
}

}  // namespace
}  // namespace sharebuf::datapath

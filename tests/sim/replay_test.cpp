// The replay datapath: determinism, the generators, LQD's labels on hand-computed sequences,
// Credence with the perfect oracle against LQD, and the CSV/pcap readers' errors.
#include "sim/replay.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/switch_config_reader.h"
#include "datapath/frame_capture.h"
#include "model/fabric_table.h"
#include "model/frame_parser.h"
#include "policies/params.h"
#include "policies/registry.h"
#include "sim/replay_inputs.h"
#include "sim/replay_scenarios.h"
#include "sim/same_instant.h"

namespace sharebuf::sim {
namespace {

using buffer::DropReason;
using datapath::FrameCapture;
using ::testing::HasSubstr;

uint64_t dropped(const QueueReport& q, DropReason r) {
  return q.dropped[static_cast<size_t>(r)];
}

// The switch's ports, one queue each, at these rates (a replayed port needs one), and a class.
void set_ports(model::SwitchConfig& c, const std::vector<uint64_t>& rates) {
  c.ports.clear();
  for (size_t p = 0; p < rates.size(); ++p)
    c.ports.push_back({.name = "p" + std::to_string(p), .rate_bps = rates[p]});
  if (c.classes.empty()) c.classes.push_back({});
}

ReplayResult replay(const ReplayScenario& sc, const std::string& name, nlohmann::json params = {},
                    ReplayOptions o = {}) {
  ReplayPolicy p{name, name, {}};
  if (!params.is_null()) p.params.values = params;
  if (o.end_ns == 0) o.end_ns = sc.end_ns;
  return run_replay(sc.config, p, sc.arrivals, o);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("sharebuf-replay-test-" + std::to_string(getpid()) + "-" + name))
      .string();
}

TEST(Replay, SameInputAndSeedGiveTheSameBytes) {
  ScenarioOptions o;
  o.duration_ms = 20;
  o.seed = 7;
  const ReplayScenario sc = make_scenario("websearch", o);
  auto run = [&](const ReplayScenario& s) {
    std::ostringstream timeline;
    std::ostringstream trace;
    ReplayOptions ro;
    ro.timeline = &timeline;
    ro.timeline_interval_ns = 100'000;
    ro.trace = &trace;
    const auto r = replay(s, "lqd", {}, ro);
    return timeline.str() + trace.str() + std::to_string(r.transmitted);
  };
  const std::string a = run(sc);
  EXPECT_EQ(a, run(make_scenario("websearch", o)));
  o.seed = 8;
  EXPECT_NE(a, run(make_scenario("websearch", o)));
  EXPECT_GT(sc.arrivals.size(), 1000u);
}

// The burst scenario tells the story the demo prints: CS lets the long flows hog the buffer and
// the incast loses frames to pool_full; DT keeps room so the incast gets more in; static caps
// every queue at B/4.
TEST(Replay, BurstScenarioSeparatesThePolicies) {
  const ReplayScenario sc = make_scenario("burst");
  const auto cs = replay(sc, "cs");
  const auto dt = replay(sc, "dt");
  const auto st = replay(sc, "static");
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

TEST(Replay, BadInputsAreRejected) {
  const ReplayScenario sc = make_scenario("burst");
  EXPECT_THROW(replay(sc, "dt", {{"alpha", -1}}), policies::ConfigError);
  EXPECT_THROW(make_scenario("nope"), std::invalid_argument);
  // The perfect oracle exists only where LQD's labels do.
  EXPECT_THROW(replay(sc, "credence", {{"oracle", "perfect"}}), policies::ConfigError);
}

// Two ports of one queue, B = 10 cells of 100 B, 1-cell frames, ports so slow that only the
// first frame of each port leaves (its transmission starts at once).
ReplayScenario tiny(std::vector<uint32_t> queues) {
  ReplayScenario s;
  s.config.buffer.capacity_cells = 10;
  s.config.buffer.cell_bytes = 100;
  set_ports(s.config, {1000, 1000});
  uint64_t t = 1;
  for (uint32_t q : queues)
    s.arrivals.push_back({.time_ns = t++, .queue = q, .bytes = 100});
  s.end_ns = t;
  return s;
}

TEST(Replay, LqdLabelsOnAHandComputedSequence) {
  // seq 0..6 -> q0 (seq 0 departs: q0 holds 1..6), seq 7..11 -> q1 (seq 7 departs: q1 holds
  // 8..11): the buffer is full. seq 12 -> q1: q0 is the longest, its newest frame (seq 6) is
  // pushed out. seq 13 -> q0 and seq 14 -> q1: both queues are the longest (5 = 5), so LQD drops
  // the arrival itself.
  const ReplayScenario sc = tiny({0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1});
  const auto tail = replay(sc, "lqd");
  std::vector<uint8_t> expect(15, 0);
  expect[6] = expect[13] = expect[14] = 1;
  EXPECT_EQ(tail.fates, expect);
  EXPECT_EQ(dropped(tail.queues[0], DropReason::kPushedOut), 1u);
  EXPECT_THAT(tail.accounting_errors, ::testing::IsEmpty());
  // From the head instead: the oldest waiting frame of q0 (seq 1) goes.
  const auto head = replay(sc, "lqd", {{"push_out", "head"}});
  expect[6] = 0;
  expect[1] = 1;
  EXPECT_EQ(head.fates, expect);
}

TEST(Replay, TraceCarriesFeaturesAtArrivalAndLabels) {
  const ReplayScenario sc = tiny({0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1});
  std::ostringstream trace;
  ReplayOptions o;
  o.trace = &trace;
  replay(sc, "lqd", {}, o);
  std::istringstream in(trace.str());
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, kTraceHeader);
  std::vector<std::string> rows;
  while (std::getline(in, line))
    rows.push_back(line);
  ASSERT_EQ(rows.size(), 15u);
  EXPECT_EQ(rows[0], "0,1,0,1,0,0,0,0,0");  // empty buffer at the first arrival
  EXPECT_THAT(rows[12], ::testing::StartsWith("12,13,1,1,4,10,"));  // q1 = 4, total = 10
  EXPECT_THAT(rows[12], ::testing::EndsWith(",0"));
  EXPECT_THAT(rows[6], ::testing::EndsWith(",1"));  // pushed out later
}

// Credence with the perfect oracle against LQD on random small switches (4 ports, 200 cells,
// bursts at 12.5x line rate). With one-cell frames it transmits exactly what LQD transmits: its
// thresholds are LQD's queue lengths and the oracle refuses exactly what LQD later pushes out.
// With frames of 1-3 cells the thresholds, kept in cells, drift from LQD, which pushes out whole
// frames (freeing up to 3 cells for a 1-cell arrival): measured 1.0 % fewer on average, 1.5 %
// at worst; docs/policies/credence.md reports -0.02 % / -5.7 % for its own model. Allowed: 2 % on
// average and 8 % for any sequence.
ReplayScenario random_switch(uint64_t seed, uint32_t max_cells) {
  std::mt19937_64 rng(seed);
  ReplayScenario sc;
  sc.config.buffer.capacity_cells = 200;
  sc.config.buffer.cell_bytes = 100;
  set_ports(sc.config, std::vector<uint64_t>(4, 100'000'000));  // 8 us per 100 B cell
  uint64_t t = 0;
  for (int burst = 0; burst < 60; ++burst) {
    t += rng() % 400'000;
    const auto q = static_cast<uint32_t>(rng() % 4);
    const auto n = 5 + rng() % 150;
    for (uint64_t i = 0; i < n; ++i) {
      sc.arrivals.push_back({.time_ns = t + i * 800,
                             .queue = q,
                             .bytes = 100 * static_cast<uint32_t>(1 + rng() % max_cells)});
    }
  }
  std::stable_sort(sc.arrivals.begin(), sc.arrivals.end(),
                   [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
  sc.end_ns = sc.arrivals.back().time_ns + 100'000'000;
  return sc;
}

TEST(Replay, PerfectOracleCredenceTransmitsWhatLqdDoes) {
  for (const uint32_t max_cells : {1u, 3u}) {
    double sum_gap = 0;
    double worst = 0;
    const int runs = 20;
    for (int seed = 1; seed <= runs; ++seed) {
      const ReplayScenario sc = random_switch(static_cast<uint64_t>(seed), max_cells);
      const auto lqd = replay(sc, "lqd");
      ReplayOptions o;
      o.oracle_labels = std::make_shared<const std::vector<uint8_t>>(lqd.fates);
      const auto perfect = replay(sc, "credence", {{"oracle", "perfect"}}, o);
      EXPECT_THAT(perfect.accounting_errors, ::testing::IsEmpty());
      if (max_cells == 1) {
        EXPECT_EQ(perfect.transmitted, lqd.transmitted) << "seed " << seed;
      }
      const double gap =
          (static_cast<double>(lqd.transmitted) - static_cast<double>(perfect.transmitted)) /
          static_cast<double>(lqd.transmitted);
      sum_gap += gap;
      worst = std::max(worst, gap);
      EXPECT_LE(gap, 0.08) << "seed " << seed;
    }
    EXPECT_LE(sum_gap / runs, 0.02);
    std::cout << "frames of 1.." << max_cells << " cells: perfect-oracle Credence vs LQD: mean gap "
              << 100 * sum_gap / runs << " %, worst " << 100 * worst << " %\n";
  }
}

// An oracle that always predicts a drop leaves only the safeguard: while every queue is below
// B/N Credence accepts, so a lone burst still gets about B/N into the buffer.
TEST(Replay, AlwaysDropOracleKeepsTheSafeguardShare) {
  const ReplayScenario sc = make_scenario("credence-fig3");
  const auto r = replay(sc, "credence", {{"oracle", "flip"}, {"flip_probability", 1.0}});
  const double fair = 2000.0 / 8;
  EXPECT_GE(r.queues[0].peak_cells, fair - 19);
  EXPECT_GT(r.transmitted, 0u);
  EXPECT_GT(dropped(r.queues[0], DropReason::kPrediction), 0u);
}

// Writing a timeline only observes: every policy transmits and drops the same frames with and
// without one (it once advanced the ports to each sample time, which moved Protean's results).
TEST(Replay, ATimelineNeverChangesAResult) {
  for (uint64_t seed : {1, 2, 3}) {
    ScenarioOptions o;
    o.duration_ms = 100;
    o.seed = seed;
    const ReplayScenario sc = make_scenario("websearch", o);
    for (const char* policy : {"protean", "smartbuf", "credence", "dt"}) {
      std::ostringstream timeline;
      ReplayOptions with;
      with.timeline = &timeline;
      with.timeline_interval_ns = 7'000;
      const auto a = replay(sc, policy, {}, with);
      const auto b = replay(sc, policy);
      EXPECT_EQ(a.fates, b.fates) << policy << " seed " << seed;
      EXPECT_EQ(a.transmitted, b.transmitted) << policy << " seed " << seed;
      EXPECT_FALSE(timeline.str().empty());
    }
  }
}

// The order within one instant: three 10-cell frames fill a 20-cell buffer at t = 0 (the first
// leaves at once); at 6.4 us the port starts its next frame and an arrival comes. Departures
// first (the default) admit it with the freed cells; arrivals first (Credence's slotted model)
// find the buffer full.
TEST(Replay, EventOrderWithinAnInstantIsAnOption) {
  ReplayScenario sc;
  sc.config.buffer.capacity_cells = 20;
  set_ports(sc.config, {1'000'000'000});  // 800 bytes: 6.4 us
  sc.arrivals = {{0, 0, 800}, {1, 0, 800}, {2, 0, 800}, {6'400, 0, 800}};
  sc.end_ns = 1'000'000;
  const auto departures_first = replay(sc, "cs");
  EXPECT_EQ(dropped(departures_first.queues[0], DropReason::kPoolFull), 0u);
  ReplayOptions o;
  o.arrivals_first = true;
  const auto arrivals_first = replay(sc, "cs", {}, o);
  EXPECT_EQ(dropped(arrivals_first.queues[0], DropReason::kPoolFull), 1u);
  EXPECT_EQ(arrivals_first.fates, (std::vector<uint8_t>{0, 0, 0, 1}));
}

// Arrivals near the end of the clock: the default end saturates instead of wrapping around (a
// wrapped end skipped every arrival), and departures never overflow.
TEST(Replay, TimesNearTwoToTheSixtyFourAreReplayed) {
  ReplayScenario sc;
  sc.config.buffer.capacity_cells = 100;
  set_ports(sc.config, {1'000'000'000});  // 1500 bytes: 12 us
  const uint64_t t = UINT64_MAX - 5'000'000;
  sc.arrivals = {{t, 0, 1500}, {t + 1, 0, 1500}, {t + 2, 0, 1500}};
  sc.end_ns = default_end_ns(sc.arrivals);
  EXPECT_EQ(sc.end_ns, UINT64_MAX);
  const auto r = replay(sc, "cs");
  EXPECT_EQ(r.arrivals, 3u);
  EXPECT_EQ(r.transmitted, 3u);
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
}

// The probe view in the replay, against hand-computed verdicts. A 1500-byte frame at t = 0 keeps
// the port busy for the whole test, then a 1-cell frame arrives every microsecond from 1 to
// 30 us. A reader at t sees the buffer as it was at the latest probe boundary at or before
// t - delay. Returns how many 1-cell frames each setting admits.
uint64_t admitted_small(const std::string& policy, nlohmann::json params, uint32_t capacity,
                        uint64_t rate_bps, buffer::ViewMode mode, uint64_t interval_ns,
                        uint64_t delay_ns) {
  ReplayScenario sc;
  sc.config.buffer.capacity_cells = capacity;
  sc.config.buffer.view_mode = mode;
  sc.config.buffer.probe_interval_ns = interval_ns;
  sc.config.buffer.probe_delay_ns = delay_ns;
  set_ports(sc.config, {rate_bps});
  sc.arrivals.push_back({0, 0, 1500});
  for (uint64_t us = 1; us <= 30; ++us)
    sc.arrivals.push_back({us * 1'000, 0, 80});
  sc.end_ns = 31'000;
  const auto r = replay(sc, policy, std::move(params));
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
  return r.queues[0].enqueued - 1;
}

TEST(Replay, ProbeViewVerdictsFollowIntervalAndDelayAsHandComputed) {
  using buffer::ViewMode;
  // DT, alpha 1, B = 20: exact admits while Q < 20 - Q, 10 frames. With 5-us probes the
  // registers show Q = 0, 4, 9, 14 at the boundaries 0, 5, 10, 15 us (Rem 20, 16, 11, 6): 14
  // frames. Seen 3 us late, boundary b rules t = b + 3 .. b + 7: 17. With 10-us probes: 19.
  const nlohmann::json dt = {{"alpha", 1.0}};
  EXPECT_EQ(admitted_small("dt", dt, 20, 1'000'000, ViewMode::kExact, 10'000, 0), 10u);
  EXPECT_EQ(admitted_small("dt", dt, 20, 1'000'000, ViewMode::kProbe, 5'000, 0), 14u);
  EXPECT_EQ(admitted_small("dt", dt, 20, 1'000'000, ViewMode::kProbe, 5'000, 3'000), 17u);
  EXPECT_EQ(admitted_small("dt", dt, 20, 1'000'000, ViewMode::kProbe, 10'000, 0), 19u);
  // Protean (incast role), alpha_incast 0.1, beta 1, B = 40, 100 Mbit/s (0.15625 cells/us).
  // Dequeue sync, exact view: no dequeue in the window, thr = 0.1 * Rem: Q < 3.64, 4 frames.
  // Probe sync, 5-us probes: the boundary at 5 us shows Q = 4 (g = 4 / 5 us / 0.15625 = 5.12,
  // thr = 5.12 * 0.1 * 36 = 18.4), at 10 us Q = 9 (g = 6.4, thr = 0.64 * 31 = 19.8), at 15 us
  // Q = 14 (thr = 0.64 * 26 = 16.6), at 20 us Q = 19 (thr = 13.4: refused): 19 frames.
  // 3 us late: boundaries 5, 10, 15 us admit while registers show 4, 9, 14, then 19 is over
  // 13.4, and at 25 us Q = 22 (g = 3.84, thr = 6.9): 22 frames. 10-us probes: 9 under the
  // empty registers' 0.1 * 40, then Q = 9 (g = 5.76, thr = 17.9) admits 10 more; then Q = 19
  // over 0.64 * 21 = 13.4: 19 frames.
  const nlohmann::json dequeue = {{"alpha_incast", 0.1}, {"beta", 1.0}};
  const nlohmann::json probe = {{"alpha_incast", 0.1}, {"beta", 1.0}, {"sync", "probe"}};
  EXPECT_EQ(admitted_small("protean", dequeue, 40, 100'000'000, ViewMode::kExact, 5'000, 0), 4u);
  EXPECT_EQ(admitted_small("protean", probe, 40, 100'000'000, ViewMode::kProbe, 5'000, 0), 19u);
  EXPECT_EQ(admitted_small("protean", probe, 40, 100'000'000, ViewMode::kProbe, 5'000, 3'000), 22u);
  EXPECT_EQ(admitted_small("protean", probe, 40, 100'000'000, ViewMode::kProbe, 10'000, 0), 19u);
}

// A view the replay cannot model is an error, never a silently empty buffer.
TEST(Replay, AProbeViewItCannotModelIsAnError) {
  ReplayScenario sc = make_scenario("burst");
  sc.config.buffer.view_mode = buffer::ViewMode::kProbe;
  sc.config.buffer.probe_interval_ns = 1'000;
  sc.config.buffer.probe_delay_ns = 1'000'000;  // 1000 intervals
  EXPECT_THAT([&] { replay(sc, "dt"); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("probe delay")));
  // A probe view it can model is not the empty buffer: DT drops in the burst.
  sc.config.buffer.probe_delay_ns = 0;
  sc.config.buffer.probe_interval_ns = 10'000;
  const auto r = replay(sc, "dt");
  EXPECT_GT(dropped(r.queues[2], DropReason::kThreshold), 0u);
}

// [buffer] probe_bytes, by hand: 10 Mbit/s, probes every 1 ms of 125 bytes (100 us of the port).
// Three 1500-byte frames (1200 us each) at t = 0: the first leaves at 0; at 1200 us the port is
// backlogged and one boundary (1 ms) has passed, so 100 us of probes go first and the second
// frame starts at 1300; likewise the third at 2600. A frame arriving at 10 ms finds the port idle
// since 3800 us: the boundaries in between cost nothing and it leaves on arrival. Without
// probe_bytes, or in exact view (no probes), they leave back to back.
std::vector<uint64_t> departure_starts(uint32_t probe_bytes, buffer::ViewMode mode,
                                       uint64_t* charged) {
  ReplayScenario sc;
  sc.config.buffer.capacity_cells = 1000;
  sc.config.buffer.view_mode = mode;
  sc.config.buffer.probe_interval_ns = 1'000'000;
  sc.config.buffer.probe_bytes = probe_bytes;
  set_ports(sc.config, {10'000'000});
  for (int i = 0; i < 3; ++i)
    sc.arrivals.push_back({0, 0, 1500});
  sc.arrivals.push_back({10'000'000, 0, 1500});
  sc.end_ns = 20'000'000;
  std::ostringstream departures;
  ReplayOptions o;
  o.departures = &departures;
  const auto r = replay(sc, "dt", {}, o);
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
  *charged = r.probe_charged_bytes;
  std::vector<uint64_t> starts;
  std::istringstream lines(departures.str());
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    std::string label, start;
    std::getline(f, label, ',');
    std::getline(f, start, ',');
    if (!start.empty() && std::isdigit(static_cast<unsigned char>(start[0])) != 0)
      starts.push_back(std::stoull(start));
  }
  return starts;
}

TEST(Replay, ProbeBytesDelayABackloggedPortAsHandComputed) {
  uint64_t charged = 0;
  EXPECT_THAT(departure_starts(125, buffer::ViewMode::kProbe, &charged),
              ::testing::ElementsAre(0, 1'300'000, 2'600'000, 10'000'000));
  EXPECT_EQ(charged, 250u);
  EXPECT_THAT(departure_starts(0, buffer::ViewMode::kProbe, &charged),
              ::testing::ElementsAre(0, 1'200'000, 2'400'000, 10'000'000));
  EXPECT_EQ(charged, 0u);
  EXPECT_THAT(departure_starts(125, buffer::ViewMode::kExact, &charged),
              ::testing::ElementsAre(0, 1'200'000, 2'400'000, 10'000'000));
}

// Every policy runs in probe view, with both syncs where it has them: books balanced, frames
// sent, and a policy that drops on a threshold in exact view does so in probe view too (the
// registers are not an empty buffer).
TEST(Replay, EveryPolicyRunsInProbeView) {
  ReplayScenario sc = make_scenario("burst");
  sc.config.buffer.view_mode = buffer::ViewMode::kProbe;
  sc.config.buffer.probe_interval_ns = 5'000;
  sc.config.buffer.probe_delay_ns = 2'000;
  for (const auto& info : policies::builtin_policies()) {
    std::vector<nlohmann::json> variants = {nlohmann::json::object()};
    if (info.name == "protean" || info.name == "smartbuf") variants.push_back({{"sync", "probe"}});
    for (const auto& params : variants) {
      const auto r = replay(sc, std::string(info.name), params);
      EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty()) << info.name << params;
      EXPECT_GT(r.transmitted, 0u) << info.name;
      if (info.name == "dt" || info.name == "fb" || info.name == "protean") {
        uint64_t threshold = 0;
        for (const auto& q : r.queues)
          threshold += dropped(q, DropReason::kThreshold);
        EXPECT_GT(threshold, 0u) << info.name << params;
      }
    }
  }
}

// In the replay too, a queue fed at twice its line rate grows at line rate and Protean's
// gradient reads 1.0: 1200-byte frames (15 cells) every 96 us into a 50 Mbit/s port (192 us per
// frame). With buildup 0.5 the incast threshold is g * Rem, so the timeline shows g.
TEST(Replay, ProteanGradientAtTwiceLineRateIsOne) {
  ReplayScenario sc;
  sc.config.buffer.capacity_cells = 100'000;
  set_ports(sc.config, {50'000'000});
  for (uint64_t t = 0; t < 500'000'000; t += 96'000)
    sc.arrivals.push_back({t, 0, 1200});
  sc.end_ns = 500'000'000;
  std::ostringstream timeline;
  ReplayOptions o;
  o.timeline = &timeline;
  o.timeline_interval_ns = 10'000'000;
  const auto r = replay(sc, "protean", {{"alpha_incast", 1.0}, {"buildup", 0.5}}, o);
  std::istringstream in(timeline.str());
  std::string line;
  std::getline(in, line);  // header
  int checked = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');)
      f.push_back(c);
    const double occupancy = std::stod(f[4]);
    const double rem = std::stod(f[8]) - std::stod(f[7]);
    if (occupancy < 10'000 || occupancy > 90'000) continue;
    EXPECT_NEAR(std::stod(f[5]) / rem, 1.0, 0.05) << line;
    ++checked;
  }
  EXPECT_GE(checked, 20);
  EXPECT_EQ(dropped(r.queues[0], DropReason::kThreshold), 0u);
}

model::SwitchConfig two_port_config(const std::string& extra = "") {
  return config::parse_switch_config(R"([buffer]
size = "1000 cells"
[[ports]]
interface = "pa"
rate = "1Gbit"
[[ports]]
interface = "pb"
rate = "1Gbit"
queues = 2
)" + extra,
                                     "replay.toml");
}

TEST(ReplayInputs, CsvArrivalsAndErrorsNamingTheRecord) {
  const auto cfg = two_port_config();
  const std::string path = temp_path("a.csv");
  std::ofstream(path) << "# comment\ntime_ns,port,queue,bytes\n300,pb,1,1500\n100,0,0,64\n";
  const auto arrivals = read_arrivals_csv(path, cfg);
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_EQ(arrivals[0].time_ns, 100u);  // sorted by time
  EXPECT_EQ(arrivals[1].queue, 2u);      // pb/1 is flat queue 2
  std::ofstream(path) << "time_ns,port,queue,bytes\n1,0,0,64\n2,0,0,huge\n";
  EXPECT_THAT([&] { read_arrivals_csv(path, cfg); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(":3: column 'bytes'")));
  std::ofstream(path) << "time_ns,port,queue,bytes\n1,pz,0,64\n";
  EXPECT_THAT([&] { read_arrivals_csv(path, cfg); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("no port 'pz'")));
  std::ofstream(path) << "time_ns,port,queue,bytes\n1,0,1,64\n";
  EXPECT_THAT([&] { read_arrivals_csv(path, cfg); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(":2: column 'queue'")));
  // The flow hash and the sender's first-BDP tag, as sharebuf-sim records them.
  std::ofstream(path) << "time_ns,port,queue,bytes,flow_hash,first_bdp\n1,0,0,64,7,1\n"
                         "2,0,0,64,4294967295,0\n3,0,0,64,0,\n";
  const auto tagged = read_arrivals_csv(path, cfg);
  ASSERT_EQ(tagged.size(), 3u);
  EXPECT_EQ(tagged[0].flow_hash, 7u);
  EXPECT_EQ(tagged[0].first_bdp, policies::FirstBdp::kYes);
  EXPECT_EQ(tagged[1].flow_hash, 4294967295u);
  EXPECT_EQ(tagged[1].first_bdp, policies::FirstBdp::kNo);
  EXPECT_EQ(tagged[2].first_bdp, policies::FirstBdp::kUnknown);
  std::ofstream(path) << "time_ns,port,queue,bytes,flow_hash\n1,0,0,64,4294967296\n";
  EXPECT_THAT([&] { read_arrivals_csv(path, cfg); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(":2: column 'flow_hash'")));
  std::ofstream(path) << "time_ns,port,queue,bytes,first_bdp\n1,0,0,64,yes\n";
  EXPECT_THAT([&] { read_arrivals_csv(path, cfg); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(":2: column 'first_bdp'")));
  // Without a class column a frame takes its queue's class: pb/1 carries "udp".
  const auto classed = config::parse_switch_config(R"([buffer]
size = "1000 cells"
[[classes]]
name = "tcp"
queue = 0
[[classes]]
name = "udp"
queue = 1
[[ports]]
interface = "pa"
queues = 2
[[ports]]
interface = "pb"
queues = 2
)",
                                                   "classed.toml");
  std::ofstream(path) << "time_ns,port,queue,bytes\n1,pb,1,64\n2,pb,0,64\n3,pa,1,64\n";
  const auto by_queue = read_arrivals_csv(path, classed);
  EXPECT_EQ(by_queue[0].class_id, 1);
  EXPECT_EQ(by_queue[1].class_id, 0);
  EXPECT_EQ(by_queue[2].class_id, 1);
  std::ofstream(path) << "time,port,queue,bytes\n";
  EXPECT_THAT([&] { read_arrivals_csv(path, cfg); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("missing 'time_ns'")));
  std::filesystem::remove(path);
}

std::vector<uint8_t> udp_frame(uint8_t dst_last, uint8_t src_last) {
  std::vector<uint8_t> f(60, 0);
  f[0] = 0x02;
  f[5] = dst_last;
  f[6] = 0x02;
  f[11] = src_last;
  f[12] = 0x08;  // IPv4
  f[14] = 0x45;
  f[17] = 46;  // total length
  f[22] = 64;
  f[23] = 17;  // UDP
  f[38] = 0;
  f[39] = 26;  // UDP length
  return f;
}

// A host with a permanent entry behind port pb.
constexpr const char* kStaticMacOnPb = R"(
[[static_macs]]
mac = "02:00:00:00:00:0b"
port = "pb"
)";

TEST(ReplayInputs, PcapMapsFramesToPortsAndNamesADamagedRecord) {
  const auto cfg = two_port_config(kStaticMacOnPb);
  const std::string path = temp_path("a.pcap");
  const std::string path_b = temp_path("b.pcap");
  {
    FrameCapture a(path, FrameCapture::Mode::kAll, 1 << 20);
    FrameCapture b(path_b, FrameCapture::Mode::kAll, 1 << 20);
    // Arrival times a second apart: each capture shifts them to wall-clock time by its own
    // offset, read when it starts, and frames offered microseconds apart with "now" changed
    // order across the two files when those readings differed (CI, 2026-12-02).
    // From 0a (on pa) to the static MAC 0b on pb, then from 0b to 0a (known only if 0a was
    // learned on pa), then again from 0a.
    a.offer(udp_frame(0x0b, 0x0a), 0, 1'000'000'000);
    b.offer(udp_frame(0x0a, 0x0b), 0, 2'000'000'000);
    a.offer(udp_frame(0x0b, 0x0a), 0, 3'000'000'000);
  }
  PcapReadStats st;
  auto arrivals = read_arrivals_pcap({{path, std::nullopt}, {path_b, std::nullopt}}, cfg, st);
  EXPECT_EQ(st.frames, 3u);
  // Without @PORT nothing is learned: the frame for 0a is flooded, one copy to every port, as
  // the live switch floods an unknown destination.
  EXPECT_EQ(st.flooded, 1u);
  ASSERT_EQ(arrivals.size(), 4u);
  EXPECT_EQ(arrivals[0].queue, 1u);  // pb/0
  EXPECT_EQ(arrivals[1].queue, 0u);  // the flooded copies, in port order
  EXPECT_EQ(arrivals[2].queue, 1u);
  EXPECT_EQ(arrivals[1].time_ns, arrivals[2].time_ns);
  st = {};
  arrivals = read_arrivals_pcap({{path, uint16_t{0}}, {path_b, uint16_t{1}}}, cfg, st);
  ASSERT_EQ(arrivals.size(), 3u);  // 0a learned on pa
  EXPECT_EQ(
      std::count_if(arrivals.begin(), arrivals.end(), [](const auto& a) { return a.queue == 0; }),
      1);
  // Cut the last record short: the reader names it.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);
  st = {};
  EXPECT_THAT(
      [&] {
        read_arrivals_pcap({{path, std::nullopt}}, cfg, st);
      },
      ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("record 2: truncated")));
  std::filesystem::remove(path);
  std::filesystem::remove(path_b);
}

// A [[routes]] entry wins over learning and flooding in the replay as live: an ECMP group's member
// is picked per flow (model::FabricTable::pick on the flow hash), the same for every frame of a
// flow, whether the file's ingress port is given (model::forward_frame) or not (the replay's own
// branch for an unknown ingress).
TEST(ReplayInputs, PcapFollowsARoutesEcmpGroupPerFlow) {
  const auto cfg = config::parse_switch_config(R"([buffer]
size = "1000 cells"
[[ports]]
interface = "pa"
rate = "1Gbit"
[[ports]]
interface = "pb"
rate = "1Gbit"
[[ports]]
interface = "pc"
rate = "1Gbit"
[[routes]]
mac = "02:00:00:00:00:0b"
ports = ["pb", "pc"]
)",
                                               "routes.toml");
  constexpr int kFlows = 16;
  auto flow_frame = [](int flow) {
    std::vector<uint8_t> f = udp_frame(0x0b, 0x0a);
    f[34] = 0x10;  // UDP source port: one per flow
    f[35] = static_cast<uint8_t>(flow);
    return f;
  };
  const std::string path = temp_path("routes.pcap");
  {
    FrameCapture cap(path, FrameCapture::Mode::kAll, 1 << 20);
    // Every flow twice, the second round after the first, a millisecond apart.
    for (int round = 0; round < 2; ++round)
      for (int flow = 0; flow < kFlows; ++flow)
        cap.offer(flow_frame(flow), 0, 1'000'000'000 + (round * kFlows + flow) * 1'000'000ull);
  }
  const std::vector<uint16_t> group = {1, 2};
  for (const std::optional<uint16_t> in : {std::optional<uint16_t>{}, std::optional<uint16_t>{0}}) {
    SCOPED_TRACE(in ? "ingress pa" : "ingress unknown");
    PcapReadStats st;
    const auto arrivals = read_arrivals_pcap({{path, in}}, cfg, st);
    EXPECT_EQ(st.flooded, 0u);  // 0b was never seen as a source: only the route knows it
    ASSERT_EQ(arrivals.size(), 2u * kFlows);
    int to_pb = 0;
    for (int flow = 0; flow < kFlows; ++flow) {
      // One queue per port: the arrival's queue is its port.
      const uint32_t first = arrivals[flow].queue;
      EXPECT_EQ(arrivals[kFlows + flow].queue, first) << "flow " << flow;
      std::vector<uint8_t> f = flow_frame(flow);
      EXPECT_EQ(first, model::FabricTable::pick(group, model::flow_hash(model::parse_frame(f))))
          << "flow " << flow;
      to_pb += first == 1;
    }
    // Both members carry flows.
    EXPECT_GT(to_pb, 0);
    EXPECT_LT(to_pb, kFlows);
  }
  std::filesystem::remove(path);
}

// A capture carries the arrival times admission used, to the nanosecond: the replay sees the
// gaps the live policy saw.
TEST(ReplayInputs, CapturedArrivalTimesAreTheAdmissionTimesInNanoseconds) {
  const auto cfg = two_port_config(kStaticMacOnPb);
  const std::string path = temp_path("ns.pcap");
  {
    FrameCapture a(path, FrameCapture::Mode::kAll, 1 << 20);
    a.offer(udp_frame(0x0b, 0x0a), 0, 5'000'000'001);
    a.offer(udp_frame(0x0b, 0x0a), 0, 5'000'000'124);
    a.offer(udp_frame(0x0b, 0x0a), 0, 5'000'012'345);
  }
  PcapReadStats st;
  const auto arrivals = read_arrivals_pcap({{path, std::nullopt}}, cfg, st);
  ASSERT_EQ(arrivals.size(), 3u);
  EXPECT_EQ(arrivals[0].time_ns, 0u);
  EXPECT_EQ(arrivals[1].time_ns, 123u);
  EXPECT_EQ(arrivals[2].time_ns, 12'344u);
  std::filesystem::remove(path);
}

// The order both engines give an instant's departures (sim/same_instant.h): the earliest start,
// the lowest port among equals; no port due: none.
TEST(SameInstant, TheEarliestPortFirstTheLowestAmongEquals) {
  const uint64_t due[] = {kNoDeparture, 500, 300, 300, kNoDeparture};
  uint32_t port = 99;
  EXPECT_EQ(next_departure(
                5, [&](uint32_t p) { return due[p]; }, port),
            300u);
  EXPECT_EQ(port, 2u);
  port = 99;
  EXPECT_EQ(next_departure(
                1, [&](uint32_t p) { return due[p]; }, port),
            kNoDeparture);
  EXPECT_EQ(port, 99u);
}

}  // namespace
}  // namespace sharebuf::sim

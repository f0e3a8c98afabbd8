// The probe registers against their definition: what a reader sees at time t is exactly the
// buffer as it was at the latest probe-interval boundary at or before t - delay, whatever the
// pattern of changes (the datapath calls advance() before each change, as here).
#include "buffer/probe_registers.h"

#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/buffer_view.h"

namespace sharebuf::buffer {
namespace {

struct State {
  std::vector<uint32_t> queue;
  uint32_t total;
};

State read(const BufferView& v, uint32_t queues) {
  State s{{}, v.total_cells()};
  for (uint32_t q = 0; q < queues; ++q)
    s.queue.push_back(v.queue_cells(q));
  return s;
}

TEST(ProbeRegisters, ReadersSeeTheStateAtTheLatestBoundaryBeforeNowMinusDelay) {
  const BufferLayout layout(10000, 80, {PortSpec{.num_queues = 2}, PortSpec{.num_queues = 2}});
  constexpr uint64_t kInterval = 10'000;  // 10 us
  for (uint64_t delay : {uint64_t{0}, uint64_t{3'000}, uint64_t{25'000}, uint64_t{100'000}}) {
    BufferState state(layout);
    ProbeRegisters probes(layout, kInterval, delay);
    probes.set_enabled(true, state, 0);
    // history[t] = the state after every change at times < t (what a boundary at t sees).
    std::map<uint64_t, State> changes;  // time of a change -> state just before it
    std::mt19937 rng(static_cast<uint32_t>(delay) + 1);
    std::uniform_int_distribution<uint64_t> gap(0, 7'000);  // often several per interval
    uint64_t now = 0;
    uint64_t lagging = 0;
    for (int i = 0; i < 20000; ++i) {
      now += gap(rng);
      // A reader (an RX batch) first: advance, then read.
      probes.advance(state, now);
      const State seen = read(BufferView::probe(probes, state, now), 4);
      const uint64_t from = now > delay ? now - delay : 0;
      const uint64_t boundary = from - from % kInterval;
      // The state at `boundary`: before the first change at or after it.
      State expected = read(BufferView::exact(state), 4);
      if (const auto it = changes.lower_bound(boundary); it != changes.end()) expected = it->second;
      ASSERT_EQ(seen.queue, expected.queue) << "delay " << delay << " t " << now;
      ASSERT_EQ(seen.total, expected.total) << "delay " << delay << " t " << now;
      lagging += seen.queue != read(BufferView::exact(state), 4).queue ? 1 : 0;
      // Then a change, as an enqueue or a departure makes it.
      if (!changes.contains(now)) changes[now] = read(BufferView::exact(state), 4);
      const uint32_t q = static_cast<uint32_t>(rng() % 4);
      const uint32_t c = 1 + static_cast<uint32_t>(rng() % 19);
      probes.advance(state, now);
      if (rng() % 2 == 0 || state.queue_cells(q) < c) {
        state.try_reserve(q, c);
      } else {
        state.release(q, c);
      }
      // Forget what no reader can see any more.
      while (changes.size() > 1 && changes.begin()->first + delay + 2 * kInterval < now)
        changes.erase(changes.begin());
    }
    EXPECT_GT(lagging, 1000u) << "the probe view was never behind: nothing was tested";
  }
}

TEST(ProbeRegisters, NothingIsTakenWhileDisabledAndEnablingTakesTheStateAtOnce) {
  const BufferLayout layout(100, 80, {PortSpec{}});
  BufferState state(layout);
  ProbeRegisters probes(layout, 1000);
  ASSERT_TRUE(state.try_reserve(0, 7));
  probes.advance(state, 5'000);
  EXPECT_EQ(probes.snapshots(), 0u);
  EXPECT_EQ(probes.visible(5'000).total.load(), 0u);  // the empty buffer of time 0
  probes.set_enabled(true, state, 5'500);
  EXPECT_EQ(probes.visible(5'500).total.load(), 7u);
  probes.advance(state, 5'999);
  EXPECT_EQ(probes.snapshots(), 1u);  // same interval
  probes.advance(state, 6'000);
  EXPECT_EQ(probes.snapshots(), 2u);
  state.release(0, 7);
}

TEST(ProbeRegisters, TimingLimits) {
  EXPECT_EQ(ProbeRegisters::check_timing(10'000, 0), std::nullopt);
  EXPECT_EQ(ProbeRegisters::check_timing(1'000, 254'000), std::nullopt);
  EXPECT_NE(ProbeRegisters::check_timing(999, 0), std::nullopt);
  EXPECT_NE(ProbeRegisters::check_timing(1'000'000'001, 0), std::nullopt);
  const auto too_late = ProbeRegisters::check_timing(1'000, 254'001);
  ASSERT_NE(too_late, std::nullopt);
  EXPECT_NE(too_late->find("254 probe intervals"), std::string::npos) << *too_late;
}

// Snapshots reach a probe-learning policy once each, in order, when they become visible.
TEST(ProbeRegisters, DeliversEachSnapshotOnceWhenItBecomesVisible) {
  const BufferLayout layout(100, 80, {PortSpec{}});
  BufferState state(layout);
  ProbeRegisters probes(layout, 1'000, 2'500);
  probes.set_enabled(true, state, 0);
  std::vector<std::pair<uint64_t, uint32_t>> got;
  auto collect = [&](const Occupancy& regs, uint64_t boundary, uint64_t interval) {
    EXPECT_EQ(interval, 1'000u);
    got.emplace_back(boundary, regs.total.load());
  };
  for (uint64_t t = 100; t <= 6'100; t += 1'000) {
    probes.advance(state, t);
    ASSERT_TRUE(state.try_reserve(0, 1));  // one cell more in every interval
    probes.deliver(t, collect);
  }
  // At 6.1 us the boundary 6.1 - 2.5 = 3.6 -> 3 us is visible: boundaries 0 (taken when the
  // registers were enabled), 1, 2, 3 us, holding the cells added before them.
  const std::vector<std::pair<uint64_t, uint32_t>> want = {
      {0, 0}, {1'000, 1}, {2'000, 2}, {3'000, 3}};
  EXPECT_EQ(got, want);
  probes.deliver(6'100, collect);
  EXPECT_EQ(got.size(), 4u);
  state.release(0, 7);
}

TEST(BufferView, RemainingNeverNegativeAndModesParse) {
  const BufferLayout layout(100, 80, {PortSpec{}});
  BufferState state(layout);
  ASSERT_TRUE(state.try_reserve(0, 100));
  EXPECT_EQ(BufferView::exact(state).remaining_cells(), 0u);
  state.release(0, 100);
  EXPECT_EQ(view_mode_from_string("exact"), ViewMode::kExact);
  EXPECT_EQ(view_mode_from_string("probe"), ViewMode::kProbe);
  EXPECT_EQ(view_mode_from_string("Probe"), std::nullopt);
}

}  // namespace
}  // namespace sharebuf::buffer

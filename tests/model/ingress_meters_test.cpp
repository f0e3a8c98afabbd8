// Trimming's Tofino approximation on an injected clock: the meters, the optimistic /
// half-pessimistic / pessimistic state machine with T0 and T1 (trimming paper, section
// 4), deflect-on-drop through the recirculation port and the notification to every pipeline.
#include <vector>

#include <gtest/gtest.h>

#include "buffer/buffer_layout.h"
#include "buffer/buffer_state.h"
#include "model/ingress_meters.h"
#include "model/tofino_approx.h"

namespace sharebuf::model {
namespace {

constexpr uint64_t kGbit = 1'000'000'000;
constexpr uint32_t kFrame = 1000;  // bytes: 8 us at 1 Gbit/s

// A shared buffer for the recirculation ports' cells: 2 ports, 100-byte cells, room for 64
// frames of kFrame bytes.
struct RecircBuffer {
  buffer::BufferLayout layout{640, 100, {buffer::PortSpec{}, buffer::PortSpec{}}};
  buffer::BufferState state{layout};
};

IngressMeterSettings settings(MeterVariant v) {
  return {.variant = v,
          .line_rate_bps = kGbit,
          .burst_bytes = 4 * kFrame,
          .t0_ns = 6'000,
          .t1_ns = 12'000};
}

// Frames of kFrame bytes offered at `rate_bps` for `duration_ns` starting at `start`: how many
// the state trims.
int trimmed_at_rate(IngressPortState& st, const IngressMeterSettings& s, uint64_t rate_bps,
                    uint64_t start, uint64_t duration_ns) {
  const uint64_t gap = kFrame * 8 * kGbit / rate_bps;  // ns between frames
  int trimmed = 0;
  for (uint64_t t = start; t < start + duration_ns; t += gap)
    trimmed += st.on_frame(kFrame, t, s).trim ? 1 : 0;
  return trimmed;
}

TEST(IngressPortState, StatesFollowTheNotificationWithT0ThenT1) {
  const IngressMeterSettings s = settings(MeterVariant::kThreeMeters);
  IngressPortState st;
  EXPECT_EQ(st.state(0), PortTrimState::kOptimistic);
  st.notify(100'000, s);
  EXPECT_EQ(st.state(100'000), PortTrimState::kPessimistic);
  EXPECT_EQ(st.state(106'000), PortTrimState::kPessimistic);  // t0_reg = t + T0
  EXPECT_EQ(st.state(106'001), PortTrimState::kHalfPessimistic);
  EXPECT_EQ(st.state(112'000), PortTrimState::kHalfPessimistic);  // t1_reg = t + T1 (Figure 3)
  EXPECT_EQ(st.state(112'001), PortTrimState::kOptimistic);
  // A notification in the half-pessimistic state restarts both from itself.
  st.notify(110'000, s);
  EXPECT_EQ(st.state(115'000), PortTrimState::kPessimistic);
  EXPECT_EQ(st.state(117'000), PortTrimState::kHalfPessimistic);
  EXPECT_EQ(st.state(122'001), PortTrimState::kOptimistic);
}

// T1 at or below T0 leaves no half-pessimistic period.
TEST(IngressPortState, T1BelowT0MeansNoHalfPessimisticPeriod) {
  IngressMeterSettings s = settings(MeterVariant::kThreeMeters);
  s.t1_ns = 3'000;
  IngressPortState st;
  st.notify(0, s);
  EXPECT_EQ(st.state(6'000), PortTrimState::kPessimistic);
  EXPECT_EQ(st.state(6'001), PortTrimState::kOptimistic);
}

TEST(IngressPortState, FrameSeesStateChangesOnce) {
  const IngressMeterSettings s = settings(MeterVariant::kThreeMeters);
  IngressPortState st;
  EXPECT_FALSE(st.on_frame(64, 1'000, s).changed);
  st.notify(2'000, s);
  auto d = st.on_frame(64, 3'000, s);
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.state, PortTrimState::kPessimistic);
  EXPECT_FALSE(st.on_frame(64, 4'000, s).changed);
  d = st.on_frame(64, 10'000, s);
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.state, PortTrimState::kHalfPessimistic);
  d = st.on_frame(64, 30'000, s);
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.state, PortTrimState::kOptimistic);
}

// Under line rate nothing is trimmed; at twice line rate about half is, in the optimistic
// state. Pessimistic lets a quarter of line rate through, half-pessimistic half.
TEST(IngressPortState, ThreeMetersTrimTheExcessOverTheStatesRate) {
  const IngressMeterSettings s = settings(MeterVariant::kThreeMeters);
  {
    IngressPortState st;
    EXPECT_EQ(trimmed_at_rate(st, s, kGbit * 9 / 10, 0, 8'000'000), 0);
  }
  {
    IngressPortState st;
    const int n = trimmed_at_rate(st, s, 2 * kGbit, 0, 8'000'000);  // 2000 frames
    EXPECT_NEAR(n, 1000, 10);
  }
  {
    // Pessimistic for the whole run (T0 long): 3/4 of a line-rate stream is trimmed.
    IngressMeterSettings p = s;
    p.t0_ns = 1'000'000'000;
    IngressPortState st;
    st.notify(0, p);
    EXPECT_NEAR(trimmed_at_rate(st, p, kGbit, 0, 8'000'000), 750, 10);
  }
  {
    IngressMeterSettings h = s;
    h.t0_ns = 0;
    h.t1_ns = 1'000'000'000;
    IngressPortState st;
    st.notify(0, h);
    EXPECT_NEAR(trimmed_at_rate(st, h, kGbit, 1, 8'000'000), 500, 10);
  }
}

// The paper's "DoD" curve (Figure 5): a line-rate meter per port that notifications do not
// change. Twice the line rate: half is trimmed; after a notification still only the excess over
// the line rate (the three meters would trim three quarters of a line-rate stream).
TEST(IngressPortState, FixedMetersIgnoreNotifications) {
  IngressMeterSettings s = settings(MeterVariant::kFixed);
  IngressPortState st;
  EXPECT_NEAR(trimmed_at_rate(st, s, 2 * kGbit, 0, 8'000'000), 1000, 10);
  s.t0_ns = 1'000'000'000;
  IngressPortState notified;
  notified.notify(0, s);
  EXPECT_EQ(trimmed_at_rate(notified, s, kGbit, 0, 8'000'000), 0);
  EXPECT_EQ(meter_variant("fixed"), MeterVariant::kFixed);
  EXPECT_EQ(meter_variant("off"), std::nullopt);
}

TEST(IngressPortState, MirrorOnDropHasNoMeters) {
  const IngressMeterSettings s = settings(MeterVariant::kMirror);
  IngressPortState st;
  st.notify(0, s);
  EXPECT_EQ(trimmed_at_rate(st, s, 4 * kGbit, 0, 8'000'000), 0);
  EXPECT_EQ(meter_variant("mirror"), MeterVariant::kMirror);
}

// switch.p4's two meters: optimistic trims above line rate (opti red), half-pessimistic above
// half (opti not green), pessimistic above a quarter (pesi not green).
TEST(IngressPortState, TwoMetersFollowTheSwitchP4Table) {
  const IngressMeterSettings s = settings(MeterVariant::kTwoMeters);
  {
    IngressPortState st;
    EXPECT_EQ(trimmed_at_rate(st, s, kGbit * 9 / 10, 0, 8'000'000), 0);
  }
  {
    IngressPortState st;
    EXPECT_NEAR(trimmed_at_rate(st, s, 2 * kGbit, 0, 8'000'000), 1000, 10);
  }
  {
    IngressMeterSettings h = s;
    h.t0_ns = 0;
    h.t1_ns = 1'000'000'000;
    IngressPortState st;
    st.notify(0, h);
    // At line rate, opti's committed bucket (half) passes half the frames green.
    EXPECT_NEAR(trimmed_at_rate(st, h, kGbit, 1, 8'000'000), 500, 10);
  }
  {
    IngressMeterSettings p = s;
    p.t0_ns = 1'000'000'000;
    IngressPortState st;
    st.notify(0, p);
    EXPECT_NEAR(trimmed_at_rate(st, p, kGbit, 0, 8'000'000), 750, 10);
  }
}

TEST(TwoRateMeter, ColoursByPeakThenCommitted) {
  TwoRateMeter m;
  // 2000-byte buckets, both full at the start: one frame green, then committed empty.
  EXPECT_EQ(m.execute(1500, 0, 2 * kGbit, kGbit, 2000), MeterColor::kGreen);
  // Peak bucket has 500 left: red.
  EXPECT_EQ(m.execute(1000, 0, 2 * kGbit, kGbit, 2000), MeterColor::kRed);
  // 4 us later: peak earned 1000 (1500 in all), committed 500 (1000): yellow.
  EXPECT_EQ(m.execute(1200, 4'000, 2 * kGbit, kGbit, 2000), MeterColor::kYellow);
}

// Two pipelines, one egress port: a deflected frame leaves the recirculation port after its
// serialisation at recirc_rate plus the recirculation latency; its notification reaches both
// pipelines one latency later and turns the port pessimistic in each.
TEST(TofinoApprox, DeflectionNotifiesEveryPipeline) {
  RecircBuffer b;
  TofinoApprox t(2, {kGbit, kGbit});
  t.settings.recirc_rate_bps.store(kGbit);
  t.settings.recirc_latency_ns.store(1'000);
  t.settings.recirc_queue_bytes.store(3 * kFrame);
  TofinoApprox::Deflected d;
  d.from.port = 1;
  d.cut.assign(128, 0);
  ASSERT_TRUE(t.deflect(/*in_port=*/0, TofinoApprox::Deflected(d), kFrame, 10'000, b.state));
  EXPECT_TRUE(t.any_deflected());
  std::vector<TofinoApprox::Deflected> out;
  t.take_departed(18'999, out, b.state);  // 8 us serialisation + 1 us latency: not yet
  EXPECT_TRUE(out.empty());
  t.take_departed(19'000, out, b.state);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(t.any_deflected());
  EXPECT_EQ(t.counters(1).notifications.load(), 1u);
  // The NOTIFY arrives at 20 us: pipeline 1 (never deflected anything) turns pessimistic too.
  t.meter(/*in_port=*/1, 1, 64, 19'500);
  EXPECT_EQ(t.state(1, 1, 19'500), PortTrimState::kOptimistic);
  t.meter(1, 1, 64, 20'000);
  EXPECT_EQ(t.state(1, 1, 20'000), PortTrimState::kPessimistic);
  t.meter(0, 1, 64, 20'000);
  EXPECT_EQ(t.state(0, 1, 20'000), PortTrimState::kPessimistic);
  EXPECT_EQ(t.counters(1).to_pessimistic.load(), 2u);
  // Another port is not affected.
  EXPECT_EQ(t.state(0, 0, 20'000), PortTrimState::kOptimistic);
}

// Back-to-back deflections whose notifications take longer to arrive than a frame takes to leave
// the recirculation port (E7: 1 ms against 120 us): each acts when it arrives, so the port turns
// pessimistic at the first one's arrival, not at the last one's.
TEST(TofinoApprox, EachNotificationActsWhenItArrives) {
  RecircBuffer b;
  TofinoApprox t(2, {kGbit, kGbit});
  t.settings.recirc_rate_bps.store(kGbit);
  t.settings.recirc_latency_ns.store(20'000);
  t.settings.recirc_queue_bytes.store(16 * kFrame);
  TofinoApprox::Deflected d;
  d.from.port = 1;
  d.cut.assign(128, 0);
  for (int i = 0; i < 12; ++i)
    ASSERT_TRUE(t.deflect(/*in_port=*/0, TofinoApprox::Deflected(d), kFrame, 0, b.state));
  // The first leaves at 8 + 20 us and notifies at 48 us; the next ones 8 us apart. The workers
  // take departures as they happen.
  std::vector<TofinoApprox::Deflected> out;
  for (uint64_t now = 0; now <= 47'000; now += 1'000)
    t.take_departed(now, out, b.state);
  EXPECT_EQ(out.size(), 3u);  // 28, 36, 44 us
  // What a frame for port 1 arriving at `now` in pipeline `pipe` sees.
  auto seen = [&](uint32_t pipe, uint64_t now) {
    t.meter(/*in_port=*/pipe, 1, 64, now);
    return t.state(pipe, 1, now);
  };
  EXPECT_EQ(seen(1, 47'999), PortTrimState::kOptimistic);
  EXPECT_EQ(seen(1, 48'000), PortTrimState::kPessimistic);
  // Pessimistic until 6 us after each arrival while they keep coming 8 us apart: half between.
  EXPECT_EQ(seen(1, 54'000), PortTrimState::kPessimistic);
  EXPECT_EQ(seen(1, 55'000), PortTrimState::kHalfPessimistic);
  EXPECT_EQ(seen(1, 56'000), PortTrimState::kPessimistic);  // the second one's arrival
  EXPECT_EQ(seen(0, 56'000), PortTrimState::kPessimistic);
}

// The pessimistic share sets both lower meters: at 50 % (two pipelines' share) a pessimistic
// port trims half of a line-rate stream, and half-pessimistic (twice it: the line rate) none.
TEST(IngressPortState, PessimisticShareSetsThePessimisticAndHalfRates) {
  for (MeterVariant v : {MeterVariant::kThreeMeters, MeterVariant::kTwoMeters}) {
    IngressMeterSettings s = settings(v);
    s.pessimistic_share = 0.5;
    s.t0_ns = 1'000'000'000;
    IngressPortState pessimistic;
    pessimistic.notify(0, s);
    EXPECT_NEAR(trimmed_at_rate(pessimistic, s, kGbit, 0, 8'000'000), 500, 10) << to_string(v);
    s.t0_ns = 0;
    IngressPortState half;
    half.notify(0, s);
    EXPECT_NEAR(trimmed_at_rate(half, s, kGbit, 1, 8'000'000), 0, 10) << to_string(v);
  }
}

// The earliest departure bounds an RX worker's sleep while frames recirculate.
TEST(TofinoApprox, NextDepartureIsTheFirstFrameToLeave) {
  RecircBuffer b;
  TofinoApprox t(2, {kGbit, kGbit});
  t.settings.recirc_rate_bps.store(kGbit);
  t.settings.recirc_latency_ns.store(1'000);
  EXPECT_EQ(t.next_departure_ns(), UINT64_MAX);
  TofinoApprox::Deflected d;
  d.from.port = 0;
  ASSERT_TRUE(t.deflect(/*in_port=*/1, TofinoApprox::Deflected(d), kFrame, 100'000, b.state));
  ASSERT_TRUE(t.deflect(/*in_port=*/0, TofinoApprox::Deflected(d), kFrame, 50'000, b.state));
  EXPECT_EQ(t.next_departure_ns(), 59'000u);  // 50 us + 8 us on the wire + 1 us
}

TEST(TofinoApprox, RecirculationQueueOverflowDrops) {
  RecircBuffer b;
  TofinoApprox t(1, {kGbit});
  t.settings.recirc_rate_bps.store(kGbit);
  t.settings.recirc_queue_bytes.store(3 * kFrame);
  TofinoApprox::Deflected d;
  d.from.port = 0;
  d.cut.assign(128, 0);
  int accepted = 0;
  for (int i = 0; i < 5; ++i)
    accepted += t.deflect(0, TofinoApprox::Deflected(d), kFrame, 0, b.state) ? 1 : 0;
  EXPECT_EQ(accepted, 3);
  EXPECT_EQ(t.counters(0).deflected.load(), 3u);
  EXPECT_EQ(t.counters(0).deflect_queue_peak.load(), 3u);  // the paper's maximum DoD queue
  EXPECT_EQ(t.counters(0).deflect_dropped.load(), 2u);
  // 8 us later one frame's worth has been serialised: room for one more.
  EXPECT_TRUE(t.deflect(0, TofinoApprox::Deflected(d), kFrame, 8'000, b.state));
  EXPECT_FALSE(t.deflect(0, TofinoApprox::Deflected(d), kFrame, 8'000, b.state));
  // They leave in order, 8 us apart.
  std::vector<TofinoApprox::Deflected> out;
  t.take_departed(1'000'000, out, b.state);
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 1; i < out.size(); ++i)
    EXPECT_EQ(out[i].leave_ns - out[i - 1].leave_ns, 8'000u);
  EXPECT_EQ(t.counters(0).deflect_queue_peak.load(), 3u);  // a peak stays after the drain
  t.reset_peaks();
  EXPECT_EQ(t.counters(0).deflect_queue_peak.load(), 0u);
}

// A deflected frame waits in the shared buffer (a Tofino's recirculation port queues in the
// traffic manager's cells): its cells count in the total every policy's free space comes from
// until it leaves, and a deflection the buffer has no cells for is dropped.
TEST(TofinoApprox, DeflectedFramesHoldSharedBufferCells) {
  RecircBuffer b;
  TofinoApprox t(1, {kGbit, kGbit});
  t.settings.recirc_rate_bps.store(kGbit);
  t.settings.recirc_latency_ns.store(1'000);
  t.settings.recirc_queue_bytes.store(1 << 20);  // the port's own limit out of the way
  TofinoApprox::Deflected d;
  d.from.port = 1;
  d.cut.assign(128, 0);
  ASSERT_TRUE(t.deflect(0, TofinoApprox::Deflected(d), kFrame, 0, b.state));
  EXPECT_EQ(b.state.total_cells(), 10u);  // 1000 B in 100-byte cells
  EXPECT_EQ(b.state.outside_cells(), 10u);
  EXPECT_EQ(b.state.queue_cells(0) + b.state.queue_cells(1), 0u);  // no queue owns them
  // Fill the rest of the buffer as queues would: no cells left for another deflection.
  ASSERT_TRUE(b.state.try_reserve(0, 630));
  EXPECT_FALSE(t.deflect(0, TofinoApprox::Deflected(d), kFrame, 0, b.state));
  EXPECT_EQ(t.counters(1).deflect_dropped.load(), 1u);
  EXPECT_EQ(b.state.total_cells(), 640u);
  // It leaves after 8 us on the wire and 1 us of latency: its cells come back.
  std::vector<TofinoApprox::Deflected> out;
  t.take_departed(9'000, out, b.state);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(b.state.outside_cells(), 0u);
  EXPECT_EQ(b.state.total_cells(), 630u);
  // What is still recirculating at shutdown gives its cells back too.
  ASSERT_TRUE(t.deflect(0, TofinoApprox::Deflected(d), kFrame, 20'000, b.state));
  t.discard_all(b.state);
  EXPECT_EQ(b.state.total_cells(), 630u);
  EXPECT_FALSE(t.any_deflected());
}

}  // namespace
}  // namespace sharebuf::model

// Trimming in the replay: the overflow actions run through the live switch's OverflowStep on the
// simulated clock. Each test replays a burst into one egress port faster than its line rate and
// checks where the refused frames went: cut copies in the trim queue (trim), in the ingress
// port's trim queue (return-to-sender), cut in an arrival's place (trim_newest), or through a
// recirculation port and back (tofino-approx); and that the same input gives the same result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/switch_config_reader.h"
#include "sim/replay.h"
#include "sim/replay_inputs.h"

namespace sharebuf::sim {
namespace {

using buffer::DropReason;

// Ports h0, h1 (2 queues each, strict priority: headers 0 ahead of data 1), 10 Gbit/s, 200 cells of
// 80 B, DT at alpha 1, class "data" to queue 0 with overflow `action`; `extra` lines join
// [trimming].
model::SwitchConfig config(const std::string& action, const std::string& extra = "") {
  const std::string text =
      "[buffer]\nsize = \"200 cells\"\ncell_bytes = 80\n[policy]\nname = \"dt\"\n"
      "[trimming]\nheader_reserve = 0\n" +
      extra +
      "[[ports]]\ninterface = \"h0\"\nrate = \"10Gbit\"\nqueues = 2\nscheduler = \"sp\"\n"
      "trim_queue = 0\n"
      "[[ports]]\ninterface = \"h1\"\nrate = \"10Gbit\"\nqueues = 2\nscheduler = \"sp\"\n"
      "trim_queue = 0\n"
      "[[classes]]\nname = \"data\"\nqueue = 1\noverflow = \"" +
      action + "\"\n";
  return config::parse_switch_config(text, "t.toml");
}

// `n` frames of 1500 B from h0 to h1's queue 1, one every 100 ns (120 Gbit/s into 10).
std::vector<ReplayArrival> burst(uint32_t n) {
  std::vector<ReplayArrival> v;
  for (uint32_t i = 0; i < n; ++i)
    v.push_back({.time_ns = 1000 + 100ull * i, .queue = 3, .bytes = 1500, .in_port = 0});
  return v;
}

ReplayResult run(const model::SwitchConfig& cfg, const std::vector<ReplayArrival>& arrivals) {
  ReplayOptions o;
  o.end_ns = default_end_ns(arrivals);
  return run_replay(replay_config(cfg), {"dt", "dt", {}}, arrivals, o);
}

TEST(ReplayTrimming, RefusedFramesSendTheirCutCopiesThroughTheTrimQueue) {
  const ReplayResult r = run(config("trim"), burst(100));
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
  const QueueReport& data = r.queues[3];
  const QueueReport& headers = r.queues[2];
  const uint64_t refused = data.dropped[static_cast<size_t>(DropReason::kThreshold)] +
                           data.dropped[static_cast<size_t>(DropReason::kPoolFull)];
  ASSERT_GT(refused, 20u);
  EXPECT_EQ(data.trimmed, refused);  // each refused frame sent a cut copy on
  // Every copy reached h1's header queue and left it: 128 B = 2 cells each.
  EXPECT_EQ(headers.arrivals, data.trimmed);
  EXPECT_EQ(headers.transmitted + headers.trimmed_dropped, data.trimmed);
  EXPECT_EQ(headers.transmitted_cells, 2 * headers.transmitted);
  EXPECT_EQ(data.transmitted + refused, 100u);
  // The arrival's fate is "dropped" for the oracle's labels: trimmed frames lost their payload.
  EXPECT_EQ(std::count(r.fates.begin(), r.fates.end(), 1), static_cast<long>(refused));
}

TEST(ReplayTrimming, ReturnToSenderSendsTheCopyBackThroughTheIngressPort) {
  const ReplayResult r = run(config("return-to-sender"), burst(100));
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
  ASSERT_GT(r.queues[3].bounced, 20u);
  EXPECT_EQ(r.queues[3].trimmed, 0u);
  EXPECT_EQ(r.queues[0].arrivals, r.queues[3].bounced);  // h0's header queue
  EXPECT_EQ(r.queues[0].transmitted, r.queues[3].bounced);
  EXPECT_EQ(r.queues[2].arrivals, 0u);
}

TEST(ReplayTrimming, TrimNewestCutsTheQueuedFrameAndAdmitsTheArrival) {
  const ReplayResult r = run(config("trim", "trim_newest = 1\n"), burst(100));
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
  const QueueReport& data = r.queues[3];
  ASSERT_GT(data.trimmed_newest, 20u);
  EXPECT_EQ(data.dropped[static_cast<size_t>(DropReason::kPushedOut)], data.trimmed_newest);
  // The arrivals took the room: none refused, so the trimmed copies are the pushed-out ones.
  EXPECT_EQ(data.dropped[static_cast<size_t>(DropReason::kThreshold)], 0u);
  EXPECT_EQ(data.trimmed, data.trimmed_newest);
  // The pushed-out frames are the ones labelled lost, not the arrivals that replaced them.
  EXPECT_EQ(std::count(r.fates.begin(), r.fates.end(), 1), static_cast<long>(data.trimmed_newest));
  EXPECT_EQ(r.fates.back(), 0);
}

TEST(ReplayTrimming, TofinoApproxMetersDeflectsAndNotifiesOnTheSimulatedClock) {
  const ReplayResult r =
      run(config("trim", "mode = \"tofino-approx\"\nrecirc_latency = \"1us\"\n"), burst(300));
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
  ASSERT_EQ(r.tofino.size(), 2u);
  const auto& h1 = r.tofino[1];
  const QueueReport& data = r.queues[3];
  // The burst passes the meters until the buffer refuses; refused frames are deflected, their
  // departures from the recirculation port notify, and the meters then trim at ingress.
  EXPECT_GT(h1["deflected"].get<uint64_t>(), 0u);
  EXPECT_EQ(h1["deflected"].get<uint64_t>(), data.deflected);
  EXPECT_EQ(h1["notifications"].get<uint64_t>(), data.deflected);
  EXPECT_GT(h1["to_pessimistic"].get<uint64_t>(), 0u);
  EXPECT_GT(data.dropped[static_cast<size_t>(DropReason::kMeter)], 0u);
  // Meter-trimmed and deflected frames both reach the header queue, trimmed.
  EXPECT_EQ(data.trimmed, data.dropped[static_cast<size_t>(DropReason::kMeter)] + data.deflected);
  EXPECT_EQ(r.queues[2].transmitted + r.queues[2].trimmed_dropped, data.trimmed);
}

// Mirror-on-Drop: no meters; each refused frame's header crosses the mirror port (128 B, not
// 1500) and reaches the header queue a recirculation latency later; nothing is notified.
TEST(ReplayTrimming, MirrorOnDropSendsEveryRefusedFramesHeaderThroughTheMirrorPort) {
  const ReplayResult r = run(config("trim",
                                    "mode = \"tofino-approx\"\nmeters = \"mirror\"\n"
                                    "recirc_latency = \"1us\"\n"),
                             burst(300));
  EXPECT_THAT(r.accounting_errors, ::testing::IsEmpty());
  const QueueReport& data = r.queues[3];
  const auto& h1 = r.tofino[1];
  EXPECT_EQ(data.dropped[static_cast<size_t>(DropReason::kMeter)], 0u);
  const uint64_t refused = data.dropped[static_cast<size_t>(DropReason::kThreshold)] +
                           data.dropped[static_cast<size_t>(DropReason::kPoolFull)];
  ASSERT_GT(refused, 200u);
  // 300 frames in 30 us: 128-byte headers at 10 Gbit/s take 102 ns each on the mirror port, so
  // none waits long enough for the 64 KiB recirculation queue to fill.
  EXPECT_EQ(h1["deflected"].get<uint64_t>(), refused);
  EXPECT_EQ(h1["deflect_dropped"].get<uint64_t>(), 0u);
  EXPECT_EQ(h1["notifications"].get<uint64_t>(), 0u);
  EXPECT_EQ(data.trimmed, refused);
  EXPECT_EQ(r.queues[2].transmitted + r.queues[2].trimmed_dropped, refused);
}

TEST(ReplayTrimming, SameInputGivesTheSameResult) {
  const auto cfg = config("trim", "mode = \"tofino-approx\"\n");
  const ReplayResult a = run(cfg, burst(300));
  const ReplayResult b = run(cfg, burst(300));
  EXPECT_EQ(a.fates, b.fates);
  EXPECT_EQ(a.tofino, b.tofino);
  EXPECT_EQ(a.queues[2].transmitted, b.queues[2].transmitted);
}

TEST(ReplayTrimming, AnArrivalFromAPortThatDoesNotExistIsAnError) {
  auto arrivals = burst(1);
  arrivals[0].in_port = 7;
  EXPECT_THROW(run(config("trim"), arrivals), std::invalid_argument);
}

}  // namespace
}  // namespace sharebuf::sim

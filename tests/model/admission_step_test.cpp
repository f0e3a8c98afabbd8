#include "model/admission_step.h"

#include <vector>

#include <gtest/gtest.h>

#include "buffer/accounting_check.h"
#include "model/departure_step.h"
#include "model/scheduler.h"
#include "model/switch_model.h"
#include "policies/lqd.h"
#include "tests/fixtures/buffer_fixture.h"
#include "tests/model/frame_builder.h"

namespace sharebuf::model {
namespace {

using buffer::DropReason;
using policies::Verdict;

// A policy that returns whatever the test tells it to, and counts its callbacks.
class ScriptedPolicy final : public policies::Policy {
 public:
  explicit ScriptedPolicy(const policies::PolicyEnv& env) : Policy(env) {}
  std::string_view name() const noexcept override { return "scripted"; }
  Verdict admit(const policies::ArrivalContext& ctx, const buffer::BufferView&) noexcept override {
    admitted_from = ctx.in_port;
    return next;
  }
  void on_dequeue(const policies::DequeueEvent& ev, const buffer::BufferView&) noexcept override {
    departed_from = ev.in_port;
  }
  void on_enqueue(const policies::ArrivalContext&, const buffer::BufferView&) noexcept override {
    ++enqueues;
  }
  uint32_t threshold_cells(uint32_t, uint8_t, const buffer::BufferView&) const noexcept override {
    return 0;
  }
  nlohmann::json params() const override { return nlohmann::json::object(); }
  // The admission step finds its push-out rule through the policy (LQD's, unless a test
  // takes it away).
  VictimPicker victim_picker() const noexcept override { return picker; }

  Verdict next = Verdict::accept();
  int enqueues = 0;
  int admitted_from = -1;  // in_port of the latest arrival and departure
  int departed_from = -1;
  VictimPicker picker = &policies::LqdPolicy::pick_victim;
};

class AdmissionStepTest : public testing::BufferFixture {
 protected:
  void SetUp() override {
    make_buffer({.capacity_cells = 20, .ports = {buffer::PortSpec{.num_queues = 3}}});
    env_.layout = &buffer_->layout();
    policy_ = std::make_unique<ScriptedPolicy>(env_);
  }
  AdmissionOutcome offer(uint32_t q, uint32_t cells, uint8_t class_id = 0,
                         const RefusalHook* hook = nullptr) {
    std::vector<std::byte> frame(cells * 80);
    policies::ArrivalContext ctx{
        .queue = q, .class_id = class_id, .cells = cells, .bytes = cells * 80};
    return admit_frame(*policy_, *buffer_, *cache_, buffer_->exact_view(), ctx, frame, {}, nullptr,
                       hook);
  }
  policies::PolicyEnv env_;
  std::unique_ptr<ScriptedPolicy> policy_;
};

TEST_F(AdmissionStepTest, AcceptEnqueuesAndNotifiesThePolicy) {
  const auto out = offer(0, 5);
  EXPECT_TRUE(out.enqueued);
  EXPECT_EQ(policy_->enqueues, 1);
  EXPECT_EQ(buffer_->state().queue_cells(0), 5u);
}

// The policy learns a frame's ingress port on arrival and again when it leaves (Credence's
// pipelines charge a departure to the pipeline that admitted the frame).
TEST_F(AdmissionStepTest, ThePolicySeesTheIngressPortOnArrivalAndDeparture) {
  std::vector<std::byte> frame(160);
  const policies::ArrivalContext ctx{.queue = 1, .in_port = 7, .cells = 2, .bytes = 160};
  ASSERT_TRUE(
      admit_frame(*policy_, *buffer_, *cache_, buffer_->exact_view(), ctx, frame, {.in_port = 7})
          .enqueued);
  EXPECT_EQ(policy_->admitted_from, 7);
  Scheduler scheduler(SchedulerKind::kRoundRobin, 3, {});
  ASSERT_TRUE(depart_next(*buffer_, *cache_, scheduler, *policy_, 0, 0, 1'000'000'000));
  EXPECT_EQ(policy_->departed_from, 7);
  // And the switch model's copy toward an egress port (live switch, replay, ns-3) carries it.
  SwitchConfig config;
  config.ports = {PortConfig{.name = "a"}, PortConfig{.name = "b"}};
  const SwitchModel sw(config);
  EXPECT_EQ(sw.copy_to(1, {.bytes = 64, .in_port = 0}).ctx.in_port, 0);
  EXPECT_EQ(sw.copy_to(0, {.bytes = 64, .in_port = 1}).ctx.in_port, 1);
}

// Telemetry shows the threshold of the class that arrives last, dropped or not.
TEST_F(AdmissionStepTest, RemembersTheLatestArrivalsClassForTelemetry) {
  EXPECT_EQ(buffer_->stats(2).shown_class(5), 5);  // nothing arrived: the fallback
  offer(2, 1, 3);
  EXPECT_EQ(buffer_->stats(2).shown_class(5), 3);
  policy_->next = Verdict::drop(DropReason::kThreshold);
  offer(2, 1, 1);
  EXPECT_EQ(buffer_->stats(2).shown_class(5), 1);
  EXPECT_EQ(buffer_->stats(0).shown_class(5), 5);  // other queues untouched
}

TEST_F(AdmissionStepTest, DropIsCountedWithItsReason) {
  policy_->next = Verdict::drop(DropReason::kThreshold);
  const auto out = offer(1, 2);
  EXPECT_FALSE(out.enqueued);
  EXPECT_EQ(out.reason, DropReason::kThreshold);
  EXPECT_EQ(buffer_->stats(1).dropped(DropReason::kThreshold), 1u);
  EXPECT_EQ(buffer_->stats(1).dropped_cells[static_cast<size_t>(DropReason::kThreshold)], 2u);
  EXPECT_EQ(policy_->enqueues, 0);
}

// trim_newest's hook: asked only for a refusal for lack of room; when it frees the queue's newest
// frame the arrival takes its place, counted as enqueued (one arrival, no drop).
struct NewestOut {
  buffer::SharedBuffer* buffer;
  buffer::CellCache* cache;
  int asked = 0;
  static bool make_room(void* self, const policies::ArrivalContext& ctx) {
    auto& n = *static_cast<NewestOut*>(self);
    ++n.asked;
    return n.buffer->push_out_newest_if(
               *n.cache, ctx.queue,
               [&](const buffer::PacketDescriptor& d) { return d.cells >= ctx.cells; }) != 0;
  }
};

TEST_F(AdmissionStepTest, ARefusalHookMakesRoomForTheArrivalInsteadOfARefusal) {
  NewestOut n{buffer_.get(), cache_.get()};
  const RefusalHook hook{&NewestOut::make_room, &n};
  EXPECT_TRUE(offer(0, 4, 0, &hook).enqueued);
  EXPECT_EQ(n.asked, 0);  // accepted: never asked
  policy_->next = Verdict::drop(DropReason::kThreshold);
  const auto out = offer(0, 3, 0, &hook);
  EXPECT_EQ(n.asked, 1);
  EXPECT_TRUE(out.enqueued);
  EXPECT_TRUE(out.made_room);
  EXPECT_EQ(buffer_->state().queue_cells(0), 3u);  // the 4-cell frame out, the 3-cell one in
  EXPECT_EQ(buffer_->stats(0).dropped(DropReason::kThreshold), 0u);
  EXPECT_EQ(buffer_->stats(0).dropped(DropReason::kPushedOut), 1u);
  // The newest frame is smaller than the arrival: nothing is taken, the arrival is refused.
  const auto refused = offer(0, 5, 0, &hook);
  EXPECT_FALSE(refused.enqueued);
  EXPECT_EQ(buffer_->state().queue_cells(0), 3u);
  EXPECT_EQ(buffer_->stats(0).dropped(DropReason::kThreshold), 1u);
  // Other refusals are not the hook's: an unsupported verdict is counted as it is.
  policy_->next = Verdict::drop(DropReason::kNone);
  EXPECT_FALSE(offer(0, 1, 0, &hook).enqueued);
  EXPECT_EQ(n.asked, 2);
}

// Whatever the policy says, a frame that does not fit is a pool_full drop.
TEST_F(AdmissionStepTest, AcceptedButTooBigIsPoolFull) {
  ASSERT_TRUE(offer(0, 18).enqueued);
  const auto out = offer(1, 3);
  EXPECT_FALSE(out.enqueued);
  EXPECT_EQ(out.reason, DropReason::kPoolFull);
  EXPECT_EQ(buffer_->stats(1).dropped(DropReason::kPoolFull), 1u);
}

TEST_F(AdmissionStepTest, PushOutEvictsFromTheVictimUntilTheFrameFits) {
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(offer(0, 4).enqueued);  // buffer full
  policy_->next = Verdict::push_out(0);
  const auto out = offer(2, 6);
  EXPECT_TRUE(out.enqueued);
  EXPECT_EQ(out.pushed_out_cells, 8u);
  EXPECT_EQ(buffer_->stats(0).dropped(DropReason::kPushedOut), 2u);
  EXPECT_EQ(buffer_->state().queue_cells(0), 12u);
  EXPECT_EQ(buffer_->state().queue_cells(2), 6u);
}

// A push-out from a policy that names no victim picker pushes nothing out: the arrival is refused
// as unsupported.
TEST_F(AdmissionStepTest, PushOutWithoutAVictimPickerIsRefused) {
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(offer(0, 4).enqueued);  // buffer full
  policy_->next = Verdict::push_out(0);
  policy_->picker = nullptr;
  const auto out = offer(2, 6);
  EXPECT_FALSE(out.enqueued);
  EXPECT_EQ(out.reason, DropReason::kUnsupported);
  EXPECT_EQ(out.pushed_out_cells, 0u);
  EXPECT_EQ(buffer_->state().queue_cells(0), 20u);
}

// The plan re-picks the longest queue after every frame it takes: when the first victim runs
// short the next longest pays, and the arrival is admitted (20 cells: q0 11, q1 9, then a
// 19-cell frame to the empty q2 takes 10 from q0 and 9 from q1, alternating as they tie).
TEST_F(AdmissionStepTest, PushOutRePicksTheLongestQueueUntilTheFrameFits) {
  for (int i = 0; i < 11; ++i)
    ASSERT_TRUE(offer(0, 1).enqueued);
  for (int i = 0; i < 9; ++i)
    ASSERT_TRUE(offer(1, 1).enqueued);
  policy_->next = Verdict::push_out(0);
  const auto out = offer(2, 19);
  EXPECT_TRUE(out.enqueued);
  EXPECT_EQ(out.pushed_out_cells, 19u);
  EXPECT_EQ(buffer_->state().queue_cells(0) + buffer_->state().queue_cells(1), 1u);
  EXPECT_EQ(buffer_->stats(0).dropped(DropReason::kPushedOut) +
                buffer_->stats(1).dropped(DropReason::kPushedOut),
            19u);
  EXPECT_EQ(buffer_->state().queue_cells(2), 19u);
}

// No frame is pushed out for an arrival that is then dropped: with q2 at 6 cells and q0, q1 at 7,
// a 4-cell arrival to q2 would need LQD to take q0 and q1 down to 6, where q2 is among the
// longest, so LQD drops the arrival instead, and nothing moves.
TEST_F(AdmissionStepTest, RefusedPushOutPlanPushesNothingOut) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(offer(0, 1).enqueued);
    ASSERT_TRUE(offer(1, 1).enqueued);
  }
  ASSERT_TRUE(offer(2, 6).enqueued);
  policy_->next = Verdict::push_out(0);
  const auto out = offer(2, 4);
  EXPECT_FALSE(out.enqueued);
  EXPECT_EQ(out.reason, DropReason::kPoolFull);
  EXPECT_EQ(out.pushed_out_cells, 0u);
  EXPECT_EQ(buffer_->state().queue_cells(0), 7u);
  EXPECT_EQ(buffer_->state().queue_cells(1), 7u);
  EXPECT_EQ(buffer_->state().queue_cells(2), 6u);
}

TEST_F(AdmissionStepTest, TrimIsDroppedUntilTheDatapathTrims) {
  policy_->next = Verdict::trim(DropReason::kThreshold);
  const auto out = offer(0, 1);
  EXPECT_FALSE(out.enqueued);
  EXPECT_EQ(out.reason, DropReason::kThreshold);
}

// The overflow action trim: the refused frame's cut copy goes to the trim queue, admitted there
// like any arrival, and every counter says what happened.
class TrimAdmissionTest : public AdmissionStepTest {
 protected:
  // A 1500-byte IPv4/UDP frame refused from queue 0 (the scripted verdict) and offered trimmed to
  // queue 2 (accepted unless the test says otherwise).
  AdmissionOutcome refuse_and_trim(std::vector<uint8_t> frame, buffer::FrameMeta meta = {}) {
    policy_->next = Verdict::drop(DropReason::kThreshold);
    const uint32_t bytes = static_cast<uint32_t>(frame.size());
    const policies::ArrivalContext ctx{
        .queue = 0, .cells = buffer_->layout().cells_for(bytes), .bytes = bytes};
    const auto refused = admit_frame(*policy_, *buffer_, *cache_, buffer_->exact_view(), ctx,
                                     std::as_bytes(std::span<const uint8_t>(frame)), meta);
    EXPECT_FALSE(refused.enqueued);
    policy_->next = trim_verdict;
    std::vector<uint8_t> scratch(frame.size());
    return admit_trimmed(*policy_, *buffer_, *cache_, buffer_->exact_view(), ctx, frame,
                         parse_frame(frame), {.size = 128}, 2, meta, scratch);
  }
  Verdict trim_verdict = Verdict::accept();
};

TEST_F(TrimAdmissionTest, TheRefusedFramesHeadersGoToTheTrimQueue) {
  const auto out = refuse_and_trim(testing::build_frame({.proto = 17, .payload = 1500 - 42}));
  EXPECT_TRUE(out.enqueued);
  EXPECT_EQ(buffer_->stats(0).dropped(DropReason::kThreshold), 1u);
  EXPECT_EQ(buffer_->stats(0).trimmed_pkts.load(), 1u);
  EXPECT_EQ(buffer_->stats(2).received_pkts.load(), 1u);
  EXPECT_EQ(buffer_->stats(2).enqueued_pkts.load(), 1u);
  EXPECT_EQ(buffer_->state().queue_cells(2), 2u) << "128 bytes in 80-byte cells";
  const uint32_t head = buffer_->dequeue(2);
  ASSERT_NE(head, buffer::kNoCell);
  const buffer::PacketDescriptor d = buffer_->pool().descriptor(head);
  EXPECT_EQ(d.bytes, 128u);
  EXPECT_NE(d.flags & buffer::kFlagTrimmed, 0);
  buffer_->release(*cache_, head);
}

TEST_F(TrimAdmissionTest, ACopyTheTrimQueueRefusesIsCountedTrimmedDropped) {
  trim_verdict = Verdict::drop(DropReason::kThreshold);
  const auto out = refuse_and_trim(testing::build_frame({.proto = 6, .payload = 1000}));
  EXPECT_FALSE(out.enqueued);
  EXPECT_EQ(buffer_->stats(0).trimmed_pkts.load(), 1u);
  EXPECT_EQ(buffer_->stats(2).trimmed_dropped_pkts.load(), 1u);
  EXPECT_EQ(buffer_->stats(2).dropped(DropReason::kThreshold), 1u);
}

// NDP's header queue: a trimmed copy takes its port's header reserve without the policy's verdict
// (here the policy refuses every copy); only once the reserve is full does the policy decide.
// A header that leaves, or is pushed out, gives its cells back to the reserve.
TEST_F(TrimAdmissionTest, TrimmedCopiesTakeTheHeaderReserveBeforeThePolicyIsAsked) {
  ASSERT_TRUE(buffer_->state().set_header_reserve(4));  // two 128-byte headers of 2 cells
  trim_verdict = Verdict::drop(DropReason::kThreshold);
  const auto frame = testing::build_frame({.proto = 17, .payload = 1500 - 42});
  EXPECT_TRUE(refuse_and_trim(frame).enqueued);
  EXPECT_TRUE(refuse_and_trim(frame).enqueued);
  EXPECT_FALSE(refuse_and_trim(frame).enqueued) << "reserve full: the policy refuses";
  EXPECT_EQ(buffer_->stats(2).header_reserve_pkts.load(), 2u);
  EXPECT_EQ(buffer_->stats(2).received_pkts.load(), 3u);
  EXPECT_EQ(buffer_->stats(2).trimmed_dropped_pkts.load(), 1u);
  EXPECT_EQ(buffer_->state().queue_cells(2), 4u);
  EXPECT_EQ(buffer_->state().free_cells(), 16u) << "the data pool is B less the reserve";
  EXPECT_TRUE(check_accounting(*buffer_).empty());

  const uint32_t head = buffer_->dequeue(2);
  ASSERT_NE(head, buffer::kNoCell);
  EXPECT_NE(buffer_->pool().descriptor(head).flags & buffer::kFlagHeaderReserve, 0);
  buffer_->release(*cache_, head);
  EXPECT_EQ(buffer_->state().header_free_cells(0), 2u);
  EXPECT_EQ(buffer_->state().free_cells(), 16u);
  EXPECT_EQ(buffer_->push_out(*cache_, 2, false), 2u);
  EXPECT_EQ(buffer_->state().header_free_cells(0), 4u);
  EXPECT_EQ(buffer_->state().free_cells(), 16u);
  EXPECT_TRUE(check_accounting(*buffer_).empty());
}

// A header LQD pushes out for an arrival gives its cells to the reserve, not to the arrival, which
// gets its room from the next victim (from the head of the longest queue: the header, then data).
TEST_F(TrimAdmissionTest, PushOutOfAReservedHeaderReturnsItsCellsToTheReserve) {
  ASSERT_TRUE(buffer_->state().set_header_reserve(2));
  trim_verdict = Verdict::accept();
  ASSERT_TRUE(refuse_and_trim(testing::build_frame({.proto = 17, .payload = 900})).enqueued);
  policy_->next = Verdict::accept();
  ASSERT_TRUE(offer(2, 8).enqueued);  // queue 2: the header (2 reserve cells), then 8 data cells
  ASSERT_TRUE(offer(1, 6).enqueued);  // 16 of B = 20 taken, the reserve included
  policy_->next = Verdict::push_out(0, true);
  const auto out = offer(0, 6);
  EXPECT_TRUE(out.enqueued);
  EXPECT_EQ(out.pushed_out_cells, 8u) << "only the data frame's cells went to the arrival";
  EXPECT_EQ(buffer_->stats(2).dropped(DropReason::kPushedOut), 2u);
  EXPECT_EQ(buffer_->state().header_free_cells(0), 2u);
  EXPECT_EQ(buffer_->state().queue_cells(0), 6u);
  EXPECT_EQ(buffer_->state().queue_cells(2), 0u);
  EXPECT_EQ(buffer_->state().free_cells(), 6u);
  EXPECT_TRUE(check_accounting(*buffer_).empty());
}

TEST_F(TrimAdmissionTest, NonIpFramesAndTrimmedCopiesAreNotTrimmedAgain) {
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_FALSE(refuse_and_trim(arp).enqueued);
  EXPECT_FALSE(refuse_and_trim(testing::build_frame({.proto = 17, .payload = 900}),
                               {.flags = buffer::kFlagTrimmed})
                   .enqueued);
  EXPECT_EQ(buffer_->stats(0).trimmed_pkts.load(), 0u);
  EXPECT_EQ(buffer_->stats(2).received_pkts.load(), 0u);
}

TEST_F(TrimAdmissionTest, ReturnToSenderCountsBouncedAndSwapsTheCopy) {
  policy_->next = Verdict::accept();
  std::vector<uint8_t> frame =
      testing::build_frame({.proto = 17, .src_port = 40000, .dst_port = 5201, .payload = 900});
  const uint32_t bytes = static_cast<uint32_t>(frame.size());
  const policies::ArrivalContext ctx{
      .queue = 0, .cells = buffer_->layout().cells_for(bytes), .bytes = bytes};
  std::vector<uint8_t> scratch(frame.size());
  const auto out = admit_trimmed(*policy_, *buffer_, *cache_, buffer_->exact_view(), ctx, frame,
                                 parse_frame(frame), {.size = 128}, 1, {}, scratch, true);
  ASSERT_TRUE(out.enqueued);
  EXPECT_EQ(buffer_->stats(0).bounced_pkts.load(), 1u);
  EXPECT_EQ(buffer_->stats(0).trimmed_pkts.load(), 0u);
  const uint32_t head = buffer_->dequeue(1);
  ASSERT_NE(head, buffer::kNoCell);
  std::vector<std::byte> copy(128);
  buffer_->pool().read_frame(head, copy);
  const auto* b = reinterpret_cast<const uint8_t*>(copy.data());
  const ParsedFrame p = parse_frame(std::span<const uint8_t>(b, 128));
  EXPECT_EQ(p.src_port, 5201);
  EXPECT_EQ(p.dst_port, 40000);
  buffer_->release(*cache_, head);
}

}  // namespace
}  // namespace sharebuf::model

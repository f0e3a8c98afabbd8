// The admission step of the RX path for one frame copy: count the arrival, ask the policy,
// carry out its verdict on the shared buffer (enqueue, drop, push-out), and tell the policy what
// was enqueued. Every caller — RX workers, the replay datapath, the benchmarks — goes through
// here, so the order "verdict, then physical fit (pool_full)" exists once.
#pragma once

#include <cstddef>
#include <span>

#include "buffer/shared_buffer.h"
#include "model/frame_parser.h"
#include "model/frame_trim.h"
#include "policies/policy.h"

namespace sharebuf::model {

struct AdmissionOutcome {
  bool enqueued = false;
  // The queue the arrival was counted at (and enqueued in): ctx.queue, or the queue of its port a
  // kAcceptInto verdict named.
  uint32_t queue = 0;
  buffer::DropReason reason = buffer::DropReason::kNone;  // why, when not enqueued
  uint32_t pushed_out_cells = 0;
  // Cells a reclaiming policy (Occamy) dropped from queue heads before this frame's verdict.
  uint32_t reclaimed_cells = 0;
  // LQD: refused after a push-out because the cells of victims an egress worker had taken did not
  // come back within SharedBuffer::kVictimWait (a worker descheduled that long).
  bool waited_out = false;
  // Refused for lack of room, then admitted into room a RefusalHook made (trim_newest).
  bool made_room = false;
};

// What may be done for a frame refused for lack of room (threshold or pool_full) before it counts
// as refused: NDP's trim_newest cuts the queue's newest frame instead. `make_room` returns true
// when it freed at least the arrival's cells of its queue; the arrival then takes them without a
// second verdict (it replaces the frame taken out) and counts as enqueued, not dropped.
struct RefusalHook {
  bool (*make_room)(void* self, const policies::ArrivalContext& ctx) = nullptr;
  void* self = nullptr;
};

// What admission reads for arrivals at `now_ns` (an RX batch, a replayed arrival): first takes
// the probe snapshot of a boundary just passed and hands a probe-learning policy the snapshots
// that have reached ingress (Policy::on_probe), then returns the view of the buffer's mode —
// live counters, or the probe registers visible at now_ns.
buffer::BufferView ingress_view(policies::Policy& policy, buffer::SharedBuffer& buffer,
                                uint64_t now_ns) noexcept;

// `ctx.cells` must be buffer.layout().cells_for(frame.size()). A reclaiming policy first gets
// Policy::reclaim() at ctx.now_ns (its head drops land in `evicted` too). A kTrim verdict is a
// refusal here (dropped with its reason); the caller applies the class's overflow action
// (admit_trimmed). `evicted` (optional) receives copies of the frames a push-out evicted for this
// one; `on_refused` (optional) is asked once for room before a refusal for threshold or pool_full
// is counted.
AdmissionOutcome admit_frame(policies::Policy& policy, buffer::SharedBuffer& buffer,
                             buffer::CellCache& cache, const buffer::BufferView& view,
                             const policies::ArrivalContext& ctx, std::span<const std::byte> frame,
                             const buffer::FrameMeta& meta,
                             buffer::EvictedFrames* evicted = nullptr,
                             const RefusalHook* on_refused = nullptr) noexcept;

// The overflow actions "trim" and "return-to-sender" for a frame of `from.queue` (refused there,
// or for return-to-sender admitted above the class's return threshold): a copy cut by
// trim_frame() into `scratch` (at least frame.size() bytes), with its addresses swapped when
// returned, goes to `trim_queue` (the egress port's, or the ingress port's when returned) and is
// admitted there like any arrival (the policy decides; it is counted received, admitted or
// dropped at the trim queue). Counts trimmed (or bounced) at `from.queue` and, when the copy is
// refused too, trimmed_dropped at the trim queue. A frame that cannot be trimmed (not IP, a
// fragment, malformed) or is itself a cut copy gets nothing: the outcome is then not enqueued
// with reason kNone.
AdmissionOutcome admit_trimmed(policies::Policy& policy, buffer::SharedBuffer& buffer,
                               buffer::CellCache& cache, const buffer::BufferView& view,
                               const policies::ArrivalContext& from, std::span<const uint8_t> frame,
                               const ParsedFrame& parsed, const TrimOptions& options,
                               uint32_t trim_queue, const buffer::FrameMeta& meta,
                               std::span<uint8_t> scratch, bool return_to_sender = false) noexcept;

// admit_trimmed() in its two halves, for a copy cut now and admitted later (the Tofino
// approximation's deflect-on-drop, model/tofino_approx.h). cut_copy: the cut (and, returned,
// swapped) copy of `frame` in `scratch`; its length, 0 when it gets none.
size_t cut_copy(std::span<const uint8_t> frame, const ParsedFrame& parsed,
                const TrimOptions& options, const buffer::FrameMeta& meta,
                std::span<uint8_t> scratch, bool return_to_sender) noexcept;
// admit_cut_copy: counts trimmed (or bounced) at `from.queue` and admits `cut` to `trim_queue`
// (trimmed_dropped there when refused).
AdmissionOutcome admit_cut_copy(policies::Policy& policy, buffer::SharedBuffer& buffer,
                                buffer::CellCache& cache, const buffer::BufferView& view,
                                const policies::ArrivalContext& from, std::span<const uint8_t> cut,
                                uint32_t trim_queue, buffer::FrameMeta meta,
                                bool return_to_sender) noexcept;

}  // namespace sharebuf::model

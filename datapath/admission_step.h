// The admission step of the RX path for one frame copy: count the arrival, ask the policy,
// carry out its verdict on the shared buffer (enqueue, drop, push-out), and tell the policy what
// was enqueued. Every caller — RX workers, the replay datapath, the benchmarks — goes through
// here, so the order "verdict, then physical fit (pool_full)" exists once.
#pragma once

#include <cstddef>
#include <span>

#include "buffer/shared_buffer.h"
#include "policies/policy.h"

namespace sharebuf::datapath {

struct AdmissionOutcome {
  bool enqueued = false;
  buffer::DropReason reason = buffer::DropReason::kNone;  // why, when not enqueued
  uint32_t pushed_out_cells = 0;
};

// What admission reads for arrivals at `now_ns` (an RX batch, a replayed arrival): first takes
// the probe snapshot of a boundary just passed and hands a probe-learning policy the snapshots
// that have reached ingress (Policy::on_probe), then returns the view of the buffer's mode —
// live counters, or the probe registers visible at now_ns.
buffer::BufferView ingress_view(policies::Policy& policy, buffer::SharedBuffer& buffer,
                                uint64_t now_ns) noexcept;

// `ctx.cells` must be buffer.layout().cells_for(frame.size()). Verdict kTrim is dropped with its
// reason until the trimming overflow action exists in the datapath.
AdmissionOutcome admit_frame(policies::Policy& policy, buffer::SharedBuffer& buffer,
                             buffer::CellCache& cache, const buffer::BufferView& view,
                             const policies::ArrivalContext& ctx, std::span<const std::byte> frame,
                             const buffer::FrameMeta& meta) noexcept;

}  // namespace sharebuf::datapath

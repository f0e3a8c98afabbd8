// QueuedProbes: the probe registers as a Tofino's probes fill them (`[buffer] probe_path =
// "queue"`). A Tofino probe is a packet: the packet generator sends one per queue every probe
// interval, it waits in the queue it measures behind every frame that arrived before it, and it
// reads that queue's depth as it leaves (dt.p4's and protean.p4's probes take
// eg_intr_md.deq_qdepth in egress); recirculation then carries the reading to ingress `probe_delay`
// later. While a queue is short its probes leave at once and this is the snapshot view
// (ProbeRegisters); while it builds, its probes leave a sojourn late and one interval's probes
// arrive as far apart as the queue grows in time: a 10x incast holds a queue's register back by
// about nine intervals.
//
// The rule, per queue q and probe-interval boundary b: the probe of b leaves q with the first
// frame-departure after which no frame that arrived at or before b is left in q (the departing
// frame arrived at or before b, the next one after b or there is none), reading q's depth after
// that departure; a probe of a boundary at which q was empty leaves at b and reads 0. The
// register of q shows the latest probe's reading from its departure + probe_delay on; the port,
// group and total counters are the sums of the queues' registers (as dt.p4 and protean.p4 keep
// Rem: B less every queue's latest depth), plus the cells held outside every queue at the latest
// update. A frame that leaves by a head drop (Occamy's reclaim, push-out from the head) does not
// move a probe on: the next departure does, or the next boundary's probe.
//
// Thread-safety: on_departure(q) runs on q's port's egress owner, on_arrival() on RX workers,
// advance() on anyone; the registers are atomics read without a lock; a spin lock guards every
// update and is taken only when a probe leaves, a queue empties, an arrival finds an empty queue
// whose zero-reading probe is pending, or an update falls due.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "buffer/buffer_state.h"
#include "buffer/occupancy.h"
#include "common/spin_lock.h"

namespace sharebuf::buffer {

class QueuedProbes {
 public:
  static constexpr uint64_t kNoFrame = ~uint64_t{0};

  QueuedProbes(const BufferLayout& layout, uint32_t fair_share_cells);

  // The registers as an ingress reader sees them (after advance()).
  const Occupancy& registers() const noexcept { return regs_; }

  // Starts from the live counters at `now_ns` (every probe of boundaries up to now counts as
  // back), with the timing the snapshots use.
  void reset(const BufferState& state, uint64_t now_ns, uint64_t interval_ns, uint64_t delay_ns);

  // A new probe interval or delay (view.set): readings in flight keep their time.
  void set_timing(uint64_t interval_ns, uint64_t delay_ns) noexcept;

  // Queue q sent a frame that arrived at `arrival_ns`, at `now_ns` (the departure step's clock);
  // its last bit leaves at `left_ns` (>= now_ns: the simulations step a frame when it starts);
  // q then holds `depth_cells` and its next frame arrived at `next_arrival_ns` (kNoFrame: q is
  // empty).
  void on_departure(const BufferState& state, uint32_t q, uint64_t arrival_ns,
                    uint64_t next_arrival_ns, uint32_t depth_cells, uint64_t now_ns,
                    uint64_t left_ns) noexcept;
  // A frame arrived at `arrival_ns` in queue q, which was empty.
  void on_arrival_to_empty(const BufferState& state, uint32_t q, uint64_t arrival_ns) noexcept;
  // Applies the updates due at `now_ns`: readings whose recirculation is over, and the zero
  // readings of queues that stayed empty until a boundary.
  void advance(const BufferState& state, uint64_t now_ns) noexcept {
    if (now_ns >= next_due_ns_.load(std::memory_order_relaxed)) apply_due(state, now_ns);
  }

  // Updates waiting for their recirculation to end (tests, telemetry).
  size_t pending() const noexcept;

 private:
  struct Update {
    uint64_t due_ns;
    uint32_t queue;
    uint32_t cells;
  };
  void apply_due(const BufferState& state, uint64_t now_ns) noexcept;
  // Under lock_: q's reading `cells`, visible from `due_ns` on (at once if that is not after
  // `now_ns`).
  void post_locked(const BufferState& state, uint32_t q, uint32_t cells, uint64_t due_ns,
                   uint64_t now_ns) noexcept;
  // Under lock_: writes q's register and keeps the sums equal to the registers' sum.
  void write_locked(const BufferState& state, uint32_t q, uint32_t cells) noexcept;
  void recompute_next_due_locked() noexcept;
  // Under lock_: an update falls due at `due_ns`.
  void lower_next_due(uint64_t due_ns) noexcept;

  const BufferLayout& layout_;
  uint32_t fair_share_;
  // Written by reset() under lock_, read by on_departure()'s check without it.
  std::atomic<uint64_t> interval_ns_{1};
  std::atomic<uint64_t> delay_ns_{0};
  Occupancy regs_;
  mutable common::SpinLock lock_;
  // Per queue: the latest boundary whose probe has left q; the boundary at which a probe will
  // find q empty unless a frame arrives first (0: none pending).
  std::unique_ptr<std::atomic<uint64_t>[]> passed_;
  std::unique_ptr<std::atomic<uint64_t>[]> zero_at_;
  std::vector<Update> pending_;  // under lock_; bounded (post_locked applies the oldest when full)
  size_t max_pending_;           // one reading per queue per interval for 256 intervals
  std::atomic<uint64_t> queue_sum_{0};
  std::atomic<uint64_t> next_due_ns_{kNoFrame};
};

}  // namespace sharebuf::buffer

// ProbeRegisters: the software analogue of the Tofino probe packets (Protean section III-C, FB's
// SYNC packets) that carry egress queue depths to ingress registers. Every probe interval the
// registers take what egress saw at the interval's boundary — whether or not a frame is leaving —
// and an ingress reader at time t sees them `delay` later: the snapshot of the latest boundary at
// or before t - delay. A BufferView in probe mode reads them, so admission decides on state up to
// one interval plus the delay old; egress-side hooks read the live counters, as Tofino's egress
// pipeline sees exact depths.
//
// The boundaries are kept without a timer thread: occupancy only changes at events (an enqueue,
// a departure, a push-out), so whoever is about to change it calls advance(now) first, and the
// first call of a new interval snapshots the live counters — exactly the state at the boundary,
// since nothing changed in between. A snapshot taken after quiet intervals stands for every
// boundary since the previous snapshot. The last kSlots snapshots are kept for the delay.
//
// Thread-safety: advance() is called by every RX and egress worker; the first of a new interval
// takes publish_lock_ (once per interval) and writes the next slot, then publishes it with a
// release store of seq_; readers (visible(), deliver()) load seq_ with acquire and walk back.
// A slot is reused kSlots snapshots later, far longer than a reader holds it (one RX batch).
// Interval, delay and enabled are atomics the control thread may change at any time.
//
// `probe_path = "queue"` (ProbePath::kQueue) makes visible() return the registers as Tofino's
// probes fill them instead, each queue's probe waiting in the queue it measures
// (buffer/queued_probes.h); the snapshots go on for deliver() (probe-learning policies).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "buffer/buffer_state.h"
#include "buffer/occupancy.h"
#include "buffer/queued_probes.h"
#include "common/spin_lock.h"

namespace sharebuf::buffer {

// How a queue's depth reaches its register: a snapshot of every queue at each boundary, or by a
// probe that waits in the queue (buffer/queued_probes.h). Fixed when the buffer is built.
enum class ProbePath : uint8_t { kDirect = 0, kQueue = 1 };
constexpr std::string_view to_string(ProbePath p) noexcept {
  return p == ProbePath::kDirect ? "direct" : "queue";
}

class ProbeRegisters {
 public:
  // Snapshots kept: the delay may be at most kSlots - 2 intervals.
  static constexpr uint32_t kSlots = 256;
  static constexpr uint64_t kMinIntervalNs = 1'000;          // 1 us
  static constexpr uint64_t kMaxIntervalNs = 1'000'000'000;  // 1 s

  ProbeRegisters(const BufferLayout& layout, uint64_t interval_ns, uint64_t delay_ns = 0,
                 ProbePath path = ProbePath::kDirect, uint32_t fair_share_cells = 0);

  ProbePath path() const noexcept { return queued_ ? ProbePath::kQueue : ProbePath::kDirect; }

  // Why an interval/delay pair cannot be modelled (a message naming the limit), or nullopt.
  static std::optional<std::string> check_timing(uint64_t interval_ns, uint64_t delay_ns);

  uint64_t interval_ns() const noexcept { return interval_ns_.load(std::memory_order_relaxed); }
  uint64_t delay_ns() const noexcept { return delay_ns_.load(std::memory_order_relaxed); }
  // Takes a valid pair (check_timing()); the next advance() starts a fresh interval.
  void set_timing(uint64_t interval_ns, uint64_t delay_ns) noexcept;

  // Snapshots are taken only while enabled (probe view, or a policy that learns from probes).
  // Enabling snapshots the state at `now_ns` at once, so the registers never hold a length from
  // before a quiet spell.
  bool enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }
  void set_enabled(bool on, const BufferState& state, uint64_t now_ns) noexcept;

  // Call before changing the occupancy at `now_ns`: the first call of a new interval snapshots
  // the live counters as the registers of that interval's boundary. One relaxed load and a
  // compare otherwise.
  // With probe_path "queue", also applies the queued probes' readings due at `now_ns`.
  void advance(const BufferState& state, uint64_t now_ns) noexcept {
    if (now_ns >= next_boundary_ns_.load(std::memory_order_relaxed) && enabled())
      publish(state, now_ns);
    if (queued_ && enabled()) queued_->advance(state, now_ns);
  }

  // What an ingress reader sees at `now_ns`: the snapshot of the latest boundary at or before
  // now_ns - delay (the empty buffer before the first); with probe_path "queue", each queue's
  // latest probe reading that has reached ingress (call advance(now_ns) first).
  const Occupancy& visible(uint64_t now_ns) const noexcept {
    return queued_ ? queued_->registers() : slot(visible_seq(now_ns)).regs;
  }

  // The departure step's and the enqueue's news for the queued probes (no-ops otherwise): see
  // QueuedProbes::on_departure() and on_arrival_to_empty().
  bool queued() const noexcept { return queued_ != nullptr && enabled(); }
  void on_departure(const BufferState& state, uint32_t q, uint64_t arrival_ns,
                    uint64_t next_arrival_ns, uint32_t depth_cells, uint64_t now_ns,
                    uint64_t left_ns) noexcept {
    if (queued()) {
      queued_->on_departure(state, q, arrival_ns, next_arrival_ns, depth_cells, now_ns, left_ns);
    }
  }
  void on_arrival_to_empty(const BufferState& state, uint32_t q, uint64_t arrival_ns) noexcept {
    if (queued()) queued_->on_arrival_to_empty(state, q, arrival_ns);
  }
  // The queued probes' readings still in recirculation (0 with probe_path "direct").
  size_t queued_pending() const noexcept { return queued_ ? queued_->pending() : 0; }

  // Hands every snapshot that became visible since the last delivery, oldest first, to
  // f(registers, boundary_ns, interval_ns): probe packets arriving at ingress, for policies that
  // learn from them (Protean's and Smartbuf's `sync = "probe"`). One caller at a time; a
  // concurrent caller returns at once and the next call delivers what it skipped. Snapshots more
  // than kSlots - 2 behind are skipped.
  template <typename F>
  void deliver(uint64_t now_ns, F&& f) noexcept {
    const uint64_t upto = visible_seq(now_ns);
    if (upto <= delivered_.load(std::memory_order_relaxed)) return;
    if (!deliver_lock_.try_lock()) return;
    uint64_t from = delivered_.load(std::memory_order_relaxed) + 1;
    if (upto - from >= kSlots - 2) from = upto - (kSlots - 3);
    for (uint64_t s = from; s <= upto; ++s) {
      const Slot& sl = slot(s);
      f(sl.regs, sl.boundary_ns.load(std::memory_order_relaxed), interval_ns());
    }
    delivered_.store(upto, std::memory_order_relaxed);
    deliver_lock_.unlock();
  }

  // Snapshots taken so far (tests, telemetry).
  uint64_t snapshots() const noexcept { return seq_.load(std::memory_order_acquire); }

 private:
  struct Slot {
    explicit Slot(const BufferLayout& layout) : regs(layout) {}
    std::atomic<uint64_t> boundary_ns{0};
    Occupancy regs;
  };
  const Slot& slot(uint64_t seq) const noexcept { return *slots_[seq % kSlots]; }
  Slot& slot(uint64_t seq) noexcept { return *slots_[seq % kSlots]; }
  uint64_t visible_seq(uint64_t now_ns) const noexcept;
  void publish(const BufferState& state, uint64_t now_ns) noexcept;
  // Under publish_lock_: the live counters into the next slot, as the boundary of now_ns.
  void snapshot_locked(const BufferState& state, uint64_t now_ns) noexcept;
  void copy_live(const BufferState& state, Slot& to, uint64_t boundary_ns) noexcept;

  const BufferLayout& layout_;
  std::atomic<uint64_t> interval_ns_;
  std::atomic<uint64_t> delay_ns_;
  std::atomic<bool> enabled_{false};
  // The next boundary: advance() publishes at or after it.
  std::atomic<uint64_t> next_boundary_ns_{0};
  common::SpinLock publish_lock_;
  common::SpinLock deliver_lock_;
  // Snapshots published; slot(seq_) is the newest. Slot 0 is the empty buffer at time 0.
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> delivered_{0};
  std::array<std::unique_ptr<Slot>, kSlots> slots_;
  std::unique_ptr<QueuedProbes> queued_;  // probe_path "queue" only
};

}  // namespace sharebuf::buffer

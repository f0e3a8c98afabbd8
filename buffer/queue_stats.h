// QueueStats: the packet counters of one queue. The accounting identities (checked by
// buffer/accounting_check.h at every test fixture's teardown):
//   received = enqueued + sum(dropped[r] for r not pushed_out or reclaimed)
//   queued   = enqueued - dequeued - dropped[pushed_out] - dropped[reclaimed]
//
// Thread-safety: atomics incremented with relaxed order by RX workers (received, enqueued,
// dropped) and the egress worker (dequeued); readers see values that are exact at quiescent
// points and at most a few frames behind otherwise.
#pragma once

#include <atomic>
#include <cstdint>

#include "buffer/delay_histogram.h"
#include "buffer/drop_reason.h"

namespace sharebuf::buffer {

struct alignas(64) QueueStats {
  std::atomic<uint64_t> received_pkts{0};
  std::atomic<uint64_t> enqueued_pkts{0};
  std::atomic<uint64_t> enqueued_cells{0};
  std::atomic<uint64_t> dequeued_pkts{0};
  std::atomic<uint64_t> dequeued_cells{0};
  std::atomic<uint64_t> dequeued_bytes{0};
  std::atomic<uint64_t> ecn_marked_pkts{0};  // enqueued with CE set by this switch
  // Packet trimming (model/frame_trim.h): frames refused here whose cut copy went to a trim
  // queue; trimmed copies this queue sent; trimmed copies this queue refused in turn.
  std::atomic<uint64_t> trimmed_pkts{0};
  std::atomic<uint64_t> trimmed_sent_pkts{0};
  std::atomic<uint64_t> trimmed_dropped_pkts{0};
  // Of the trimmed copies this queue admitted, those that took its port's header reserve.
  std::atomic<uint64_t> header_reserve_pkts{0};
  // Return-to-sender: frames of this queue whose cut copy went back toward their sender.
  std::atomic<uint64_t> bounced_pkts{0};
  // Trimming's Tofino approximation: frames of this queue the buffer refused that went into a
  // recirculation port (deflect-on-drop), to be trimmed as they leave it.
  std::atomic<uint64_t> deflected_pkts{0};
  // NDP's trim_newest: frames of this queue trimmed from its tail to admit an arrival.
  std::atomic<uint64_t> trimmed_newest_pkts{0};
  // Of this queue's pool_full drops, the arrivals LQD refused after waiting
  // SharedBuffer::kVictimWait for cells an egress worker had taken and not yet given back (the
  // host descheduled that worker): a drop of the emulation, which a hardware switch would not
  // make. Kept apart so that a run can tell them from the buffer's.
  std::atomic<uint64_t> stalled_pkts{0};
  std::atomic<uint64_t> dropped_pkts[kNumDropReasons] = {};
  std::atomic<uint64_t> dropped_cells[kNumDropReasons] = {};
  DelayHistogram delay;  // arrival to transmission of every dequeued frame
  // The class of the latest arrival (-1: none yet). Telemetry shows the threshold of this class:
  // a queue that carries several classes has one threshold per class, and the one that applies
  // to the traffic actually arriving is the informative one.
  std::atomic<int16_t> last_class{-1};

  // The class whose threshold telemetry shows: the latest arrival's, else `fallback` (the first
  // class mapped to the queue).
  uint8_t shown_class(uint8_t fallback) const noexcept {
    const int16_t c = last_class.load(std::memory_order_relaxed);
    return c < 0 ? fallback : static_cast<uint8_t>(c);
  }

  uint64_t dropped_before_enqueue() const noexcept {
    uint64_t n = 0;
    for (size_t r = 0; r < kNumDropReasons; ++r) {
      if (!evicted_after_admission(static_cast<DropReason>(r))) {
        n += dropped_pkts[r].load(std::memory_order_relaxed);
      }
    }
    return n;
  }
  // Admitted frames that left the queue unsent: pushed out (LQD) or reclaimed (Occamy).
  uint64_t evicted() const noexcept {
    return dropped(DropReason::kPushedOut) + dropped(DropReason::kReclaimed);
  }
  uint64_t dropped(DropReason r) const noexcept {
    return dropped_pkts[static_cast<size_t>(r)].load(std::memory_order_relaxed);
  }
  void reset() noexcept;
};

inline void QueueStats::reset() noexcept {
  for (auto* c : {&received_pkts, &enqueued_pkts, &enqueued_cells, &dequeued_pkts, &dequeued_cells,
                  &dequeued_bytes, &ecn_marked_pkts, &trimmed_pkts, &trimmed_sent_pkts,
                  &trimmed_dropped_pkts, &header_reserve_pkts, &bounced_pkts, &deflected_pkts,
                  &trimmed_newest_pkts, &stalled_pkts}) {
    c->store(0, std::memory_order_relaxed);
  }
  for (size_t r = 0; r < kNumDropReasons; ++r) {
    dropped_pkts[r].store(0, std::memory_order_relaxed);
    dropped_cells[r].store(0, std::memory_order_relaxed);
  }
  delay.reset();
}

}  // namespace sharebuf::buffer

// EgressPath: the transmit step of one port — scheduler, shaper, dequeue, gather into the TX
// ring, free, on_dequeue at the frame's line-rate departure time (model/departure_clock.h) —
// and who may run it. Normally the port's egress worker owns it. When
// that worker sleeps (its queues were empty), the RX worker that enqueues the next frame may take
// ownership and send right away ("run to completion"): that saves waking a second thread per hop,
// which is most of a frame's latency through an idle switch on a 2-core machine.
//
// Ownership is one atomic flag (`owned`): acquire with try_acquire()/acquire() (acquire order)
// and give back with release() (release order), so the scheduler's and shaper's state written by
// one owner is seen by the next. Only the owner calls send_burst().
#pragma once

#include <atomic>
#include <cstdint>

#include "buffer/cell_pool.h"
#include "datapath/switch_core.h"

namespace sharebuf::datapath {

class EgressPath {
 public:
  EgressPath(SwitchCore& core, uint32_t port) : core_(core), port_(port) {}

  bool try_acquire() noexcept;
  void acquire() noexcept;
  void release() noexcept;

  enum class Stop { kEmpty, kShaped, kRingFull, kBudget };
  struct Result {
    uint32_t sent = 0;
    Stop stop = Stop::kEmpty;
    uint64_t wait_until_ns = 0;  // with kShaped: when the next frame may go (monotonic)
    // Frames the wire did not take (a full socket buffer, or the veth peer's backlog full:
    // EAGAIN, ENOBUFS), staged for the next kick. With nothing queued behind them, no kick may
    // come: whoever sent must see that one does (egress_worker.cpp, rx_worker.cpp).
    uint32_t staged = 0;
  };
  // Sends up to `budget` frames that the scheduler and shaper allow now, then kicks the kernel.
  Result send_burst(buffer::CellCache& cache, uint32_t budget) noexcept;
  bool any_queued() const noexcept;

 private:
  bool send_one(uint32_t k, buffer::CellCache& cache, uint64_t now_ns, bool backlogged) noexcept;
  // With [buffer] probe_bytes: the probes of the interval boundaries passed since the last burst
  // take their bytes from the shaper and the departure clock (model/probe_charge.h).
  void charge_probes(uint64_t now_ns, bool backlogged) noexcept;

  SwitchCore& core_;
  uint32_t port_;
};

}  // namespace sharebuf::datapath

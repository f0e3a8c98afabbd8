// EgressWorker: the transmit side of one port. It picks a queue with the port's scheduler, waits
// for the shaper's tokens, dequeues, gathers the frame's cells straight into a TX ring slot, frees
// the cells, tells the policy (on_dequeue), and kicks the kernel once per burst. Every probe
// interval it publishes its queue lengths to the probe registers. With nothing to send it sleeps
// (futex) until an RX worker enqueues for this port.
#pragma once

#include <cstdint>

#include "buffer/cell_pool.h"
#include "datapath/switch_core.h"

namespace sharebuf::datapath {

class EgressWorker {
 public:
  static constexpr uint32_t kBurst = 32;

  EgressWorker(SwitchCore& core, uint32_t port) : core_(core), port_(port) {}
  void run();

 private:
  // Length of the oldest frame of the port's k-th queue, 0 if empty.
  uint32_t head_bytes(uint32_t k) const noexcept;
  bool any_queued() const noexcept;
  void sleep_until_work(uint64_t now_ns);
  // Sends the head frame of queue k. Returns false if the TX ring had no slot.
  bool send_one(uint32_t k, buffer::CellCache& cache, uint64_t now_ns);

  SwitchCore& core_;
  uint32_t port_;
};

}  // namespace sharebuf::datapath

// ProbeRegisters: the software analogue of the Tofino probe packets that recirculate egress queue
// depths into ingress registers. Each egress worker calls maybe_publish() once per loop
// iteration; every probe interval it overwrites its port's slots (queue lengths, port total,
// active-queue count) and the shared slots (buffer total, group totals and counts) with the live
// values it sees. A BufferView in probe mode reads these slots, so a policy decides on state up
// to one probe interval old, as hardware does.
//
// Thread-safety: a port's slots and its last-publish time are written only by that port's
// egress worker; the shared slots by whichever worker publishes last (each writes a complete
// live value, so the slot is at most one interval old once every port publishes). The interval
// is an atomic that the control thread may change at any time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "buffer/buffer_state.h"
#include "buffer/occupancy.h"

namespace sharebuf::buffer {

class ProbeRegisters {
 public:
  ProbeRegisters(const BufferLayout& layout, uint64_t interval_ns);

  uint64_t interval_ns() const noexcept { return interval_ns_.load(std::memory_order_relaxed); }
  void set_interval_ns(uint64_t ns) noexcept { interval_ns_.store(ns, std::memory_order_relaxed); }

  // Publishes port `port` if at least one interval has passed since its last publication.
  // Returns true if it published.
  bool maybe_publish(uint32_t port, const BufferState& state, uint64_t now_ns) noexcept;
  void publish(uint32_t port, const BufferState& state, uint64_t now_ns) noexcept;
  // Publishes every port (used when the view switches to probe mode, so it starts fresh).
  void publish_all(const BufferState& state, uint64_t now_ns) noexcept;

  const Occupancy& registers() const noexcept { return regs_; }
  uint64_t last_publish_ns(uint32_t port) const noexcept {
    return last_ns_[port].load(std::memory_order_relaxed);
  }

 private:
  const BufferLayout& layout_;
  std::atomic<uint64_t> interval_ns_;
  Occupancy regs_;
  std::unique_ptr<std::atomic<uint64_t>[]> last_ns_;
};

}  // namespace sharebuf::buffer

#include "datapath/egress_path.h"

#include <algorithm>
#include <cstdint>
#include <thread>

#include "model/departure_step.h"

namespace sharebuf::datapath {

bool EgressPath::try_acquire() noexcept {
  PortRuntime& port = *core_.ports[port_];
  // acquire pairs with the release in release(): the previous owner's state is visible.
  return !port.tx_owned.exchange(true, std::memory_order_acquire);
}

void EgressPath::acquire() noexcept {
  // Other owners hold it for one short burst at most.
  while (!try_acquire())
    std::this_thread::yield();
}

void EgressPath::release() noexcept {
  core_.ports[port_]->tx_owned.store(false, std::memory_order_release);
}

bool EgressPath::any_queued() const noexcept {
  const buffer::BufferLayout& layout = core_.buffer().layout();
  for (uint32_t k = 0; k < layout.queues_on_port(port_); ++k) {
    if (core_.buffer().queue(layout.queue_id(port_, k)).length_packets_approx() != 0) return true;
  }
  return false;
}

bool EgressPath::send_one(uint32_t k, buffer::CellCache& cache, uint64_t now_ns,
                          bool backlogged) noexcept {
  PortRuntime& port = *core_.ports[port_];
  model::SwitchModel::Port& mport = core_.switch_model.port(port_);
  uint32_t room = 0;
  uint8_t* slot = port.io->tx_slot(&room);
  if (slot == nullptr) return false;
  policies::Policy& policy = core_.policy();
  // A shared AF_XDP UMEM: a frame queued in its chunk leaves from there and the slot's chunk
  // takes its place in the buffer (CellPool::swap_chunk).
  std::byte* from = nullptr;
  const bool chunks =
      port.io->tx_chunks() != nullptr && port.io->tx_chunks() == core_.buffer().pool().chunks();
  // model/departure_step.h; nothing happens when the head was pushed out since the pick.
  model::depart(
      core_.buffer(), cache, mport.scheduler, policy, port_, k, now_ns,
      std::span<std::byte>(reinterpret_cast<std::byte*>(slot), room),
      [&](const buffer::PacketDescriptor& d, size_t copied) {
        if (from != nullptr) {
          port.io->tx_send_from(reinterpret_cast<uint8_t*>(from));
          port.counters.tx_from_chunk.fetch_add(1, std::memory_order_relaxed);
        }
        port.io->tx_commit(static_cast<uint32_t>(copied), d.arrival_ns);
        port.shaper.consume(d.bytes);
        port.counters.tx_frames.fetch_add(1, std::memory_order_relaxed);
        port.counters.tx_bytes.fetch_add(copied, std::memory_order_relaxed);
        // The frame's own departure time at line rate (model/departure_clock.h); an
        // unshaped port reads the clock per frame.
        return mport.clock.depart(d.bytes, d.arrival_ns,
                                  mport.clock.unshaped() ? monotonic_ns() : now_ns, backlogged);
      },
      chunks ? &from : nullptr);
  return true;
}

void EgressPath::charge_probes(uint64_t now_ns, bool backlogged) noexcept {
  const buffer::SharedBuffer& buf = core_.buffer();
  if (buf.probe_bytes() == 0 || !buf.probes().enabled()) return;
  PortRuntime& port = *core_.ports[port_];
  model::SwitchModel::Port& mport = core_.switch_model.port(port_);
  if (port.shaper.unshaped()) return;  // no rate to take them from
  const uint64_t interval = buf.probes().interval_ns();
  const uint64_t owed = mport.probe_charge.owed_bytes(
      now_ns, interval, uint64_t{buf.probe_bytes()} * buf.layout().queues_on_port(port_),
      backlogged, port.shaper.catchup_ns() / interval + 1);
  if (owed == 0) return;
  const auto bytes = static_cast<uint32_t>(std::min<uint64_t>(owed, UINT32_MAX));
  port.shaper.consume(bytes);
  mport.clock.depart(bytes, now_ns, now_ns, backlogged);  // the probes leave before the next frame
  port.counters.probe_charged_bytes.fetch_add(owed, std::memory_order_relaxed);
}

EgressPath::Result EgressPath::send_burst(buffer::CellCache& cache, uint32_t budget) noexcept {
  PortRuntime& port = *core_.ports[port_];
  Result r;
  // A rate set live (a configuration reload): the shaper and the departure clock follow.
  if (const uint64_t rate = port.line_rate_bps.load(std::memory_order_relaxed);
      rate != port.shaper.rate_bps())
    core_.apply_rate(port_, rate, port.io->mtu());
  const uint64_t now = monotonic_ns();
  const bool backlogged = port.shaper.backlogged();
  charge_probes(now, backlogged);
  for (;;) {
    if (r.sent == budget) {
      r.stop = Stop::kBudget;
      break;
    }
    const int k =
        model::pick_queue(core_.buffer(), core_.switch_model.port(port_).scheduler, port_);
    if (k == model::Scheduler::kNone) {
      r.stop = Stop::kEmpty;
      break;
    }
    // The shaper's clock is `now`, taken once per burst: the wait is from then, not from
    // whenever the caller gets to sleep, or every burst would lose its own duration.
    const uint64_t wait = port.shaper.wait_ns(
        model::head_bytes(core_.buffer(), port_, static_cast<uint32_t>(k)), now);
    if (wait > 0) {
      r.stop = Stop::kShaped;
      r.wait_until_ns = now + wait;
      break;
    }
    if (!send_one(static_cast<uint32_t>(k), cache, now, backlogged)) {
      r.stop = Stop::kRingFull;
      break;
    }
    ++r.sent;
  }
  // tx_errors counts frames (docs/metrics.md), and one kick may drop several.
  const uint64_t dropped_before = port.io->tx_dropped();
  if (!port.io->tx_kick(&port.latency.hops[HopLatency::kRxToSent]))
    port.counters.tx_errors.fetch_add(port.io->tx_dropped() - dropped_before,
                                      std::memory_order_relaxed);
  r.staged = port.io->tx_pending();
  port.shaper.set_backlogged(r.stop != Stop::kEmpty);
  if (const uint64_t owed = port.shaper.take_caught_up_bytes(); owed != 0)
    port.counters.shaper_catchup_bytes.fetch_add(owed, std::memory_order_relaxed);
  return r;
}

}  // namespace sharebuf::datapath

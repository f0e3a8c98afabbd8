#include "datapath/egress_worker.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>

#include "datapath/admission_step.h"

namespace sharebuf::datapath {
namespace {

void sleep_until(uint64_t deadline_ns) noexcept {
  timespec ts{static_cast<time_t>(deadline_ns / 1'000'000'000ull),
              static_cast<long>(deadline_ns % 1'000'000'000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

uint32_t EgressWorker::head_bytes(uint32_t k) const noexcept {
  const uint32_t q = core_.buffer.layout().queue_id(port_, k);
  if (core_.buffer.queue(q).length_packets_approx() == 0) return 0;
  const uint32_t head = core_.buffer.queue(q).peek_head();
  return head == buffer::kNoCell ? 0 : core_.buffer.pool().descriptor(head).bytes;
}

bool EgressWorker::any_queued() const noexcept {
  const buffer::BufferLayout& layout = core_.buffer.layout();
  for (uint32_t k = 0; k < layout.queues_on_port(port_); ++k) {
    if (core_.buffer.queue(layout.queue_id(port_, k)).length_packets_approx() != 0) return true;
  }
  return false;
}

void EgressWorker::sleep_until_work(uint64_t now_ns) {
  PortRuntime& port = *core_.ports[port_];
  // Publish before sleeping, so the registers never keep a length the queue no longer has.
  core_.buffer.probes().publish(port_, core_.buffer.state(), now_ns);
  EgressSignal& s = port.signal;
  const uint32_t seen = s.seq.load(std::memory_order_acquire);
  s.sleeping.store(true, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with wake_if_sleeping()
  if (!any_queued() && !core_.stop_egress.load(std::memory_order_relaxed)) {
    s.seq.wait(seen, std::memory_order_acquire);
  }
  s.sleeping.store(false, std::memory_order_relaxed);
}

bool EgressWorker::send_one(uint32_t k, buffer::CellCache& cache, uint64_t now_ns) {
  PortRuntime& port = *core_.ports[port_];
  uint32_t room = 0;
  uint8_t* slot = port.io->tx_slot(&room);
  if (slot == nullptr) return false;
  const uint32_t q = core_.buffer.layout().queue_id(port_, k);
  const uint32_t head = core_.buffer.dequeue(q);
  if (head == buffer::kNoCell) return true;  // pushed out meanwhile
  const buffer::PacketDescriptor d = core_.buffer.pool().descriptor(head);
  const size_t n = core_.buffer.pool().read_frame(
      head, std::span<std::byte>(reinterpret_cast<std::byte*>(slot), room));
  port.io->tx_commit(static_cast<uint32_t>(n));
  port.shaper.consume(d.bytes);
  port.scheduler.sent(static_cast<int>(k), d.bytes);
  port.counters.tx_frames.fetch_add(1, std::memory_order_relaxed);
  port.counters.tx_bytes.fetch_add(n, std::memory_order_relaxed);
  core_.buffer.stats(q).dequeued_bytes.fetch_add(n, std::memory_order_relaxed);
  core_.buffer.release(cache, head);
  policies::Policy& policy = *core_.policy.load(std::memory_order_acquire);
  policy.on_dequeue(policies::DequeueEvent{.now_ns = now_ns,
                                           .queue = q,
                                           .port = static_cast<uint16_t>(port_),
                                           .class_id = d.class_id,
                                           .cells = d.cells,
                                           .bytes = d.bytes,
                                           .sojourn_ns = now_ns - std::min(now_ns, d.arrival_ns)},
                    core_.buffer.view());
  return true;
}

void EgressWorker::run() {
  // Shaper sleeps are tens of microseconds; the default 50 us timer slack would distort them.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  buffer::CellCache cache(core_.buffer.pool());
  PortRuntime& port = *core_.ports[port_];
  const uint32_t max_frame = port.io->mtu() + 64;
  // Depth: two full frames, or 200 us at the port rate, whichever is larger: enough to absorb
  // wake-up jitter, small enough not to burst.
  port.shaper.set_rate(port.config.rate_bps,
                       std::max<uint64_t>(2 * max_frame, port.config.rate_bps / 8 / 5000));
  uint32_t sent_in_burst = 0;
  while (!core_.stop_egress.load(std::memory_order_relaxed)) {
    const uint64_t now = monotonic_ns();
    core_.buffer.probes().maybe_publish(port_, core_.buffer.state(), now);
    const int k = port.scheduler.pick([this](uint32_t i) { return head_bytes(i); });
    if (k == Scheduler::kNone) {
      port.io->tx_kick();
      sent_in_burst = 0;
      sleep_until_work(now);
      continue;
    }
    const uint64_t wait = port.shaper.wait_ns(head_bytes(static_cast<uint32_t>(k)), now);
    if (wait > 0) {
      port.io->tx_kick();
      sent_in_burst = 0;
      sleep_until(now + wait);
      continue;
    }
    if (!send_one(static_cast<uint32_t>(k), cache, now)) {
      if (!port.io->tx_kick()) port.counters.tx_errors.fetch_add(1, std::memory_order_relaxed);
      port.io->tx_wait(10);
      continue;
    }
    if (++sent_in_burst >= kBurst) {
      if (!port.io->tx_kick()) port.counters.tx_errors.fetch_add(1, std::memory_order_relaxed);
      sent_in_burst = 0;
    }
  }
  port.io->tx_kick();
}

}  // namespace sharebuf::datapath

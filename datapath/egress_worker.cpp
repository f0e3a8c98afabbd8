#include "datapath/egress_worker.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

namespace sharebuf::datapath {
namespace {

void sleep_until(uint64_t deadline_ns) noexcept {
  timespec ts{static_cast<time_t>(deadline_ns / 1'000'000'000ull),
              static_cast<long>(deadline_ns % 1'000'000'000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

void EgressWorker::sleep_until_work() {
  PortRuntime& port = *core_.ports[port_];
  EgressSignal& s = port.signal;
  const uint32_t seen = s.seq.load(std::memory_order_acquire);
  path_.release();
  s.sleeping.store(true, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with wake_if_sleeping()
  if (!path_.any_queued() && !core_.stop_egress.load(std::memory_order_relaxed)) {
    s.seq.wait(seen, std::memory_order_acquire);
  }
  s.sleeping.store(false, std::memory_order_relaxed);
  path_.acquire();
}

void EgressWorker::retry_staged() {
  // Marked asleep meanwhile, so that an RX worker enqueueing for this port sends inline (its kick
  // carries the staged frames too), as it would if this worker slept; unlike that sleep, this one
  // ends by itself. Spinning on the kick instead, or waiting in poll() for the socket (writable
  // all along when the veth peer's backlog was what refused them), kept this worker awake and the
  // RX workers from sending inline: TCP through the switch lost a quarter of its goodput.
  PortRuntime& port = *core_.ports[port_];
  path_.release();
  port.signal.sleeping.store(true, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with wake_if_sleeping()
  sleep_until(monotonic_ns() + kStagedRetryNs);
  port.signal.sleeping.store(false, std::memory_order_relaxed);
  path_.acquire();
}

void EgressWorker::run() {
  // Shaper sleeps are tens of microseconds; the default 50 us timer slack would distort them.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  buffer::CellCache cache(core_.buffer().pool());
  PortRuntime& port = *core_.ports[port_];
  path_.acquire();
  while (!core_.stop_egress.load(std::memory_order_relaxed)) {
    // A burst boundary: the policy pointer send_burst() loads is not held across it.
    core_.epochs.enter(port_);
    const EgressPath::Result r = path_.send_burst(cache, kBurst);
    if (r.stop != EgressPath::Stop::kBudget) core_.epochs.idle(port_);  // about to block
    switch (r.stop) {
      case EgressPath::Stop::kBudget:
        break;
      case EgressPath::Stop::kEmpty:
        if (r.staged != 0) {
          retry_staged();
        } else {
          sleep_until_work();
        }
        break;
      case EgressPath::Stop::kShaped:
        sleep_until(r.wait_until_ns);
        break;
      case EgressPath::Stop::kRingFull:
        port.io->tx_wait(10);
        break;
    }
  }
  core_.epochs.idle(port_);
  path_.release();
}

}  // namespace sharebuf::datapath

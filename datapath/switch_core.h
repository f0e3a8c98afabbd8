// SwitchCore: the state every datapath thread shares — the switch model (model/switch_model.h: the
// shared buffer, the policy slot, the MAC table, the classifier, trimming, per port the scheduler,
// departure clock and probe charge), and what only the live switch has: per port its I/O
// (datapath/port_io.h), counters, shaper and the egress worker's wake-up signal, the epochs that
// free a replaced policy, captures and the RX workers' parking. Switch (switch.h) owns it and the
// threads.
//
// Thread-safety: the policy slot is an atomic that RX workers load once per batch and egress
// workers once per frame, between the epoch boundaries they announce (datapath/epochs.h); a
// live switch publishes a new policy and frees the old one when no worker can hold it.
// `stop_rx`/`stop_egress` are set by the control thread. Each Port's RX fields belong to its RX
// worker and its TX fields (scheduler, shaper) to its egress worker.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "buffer/shared_buffer.h"
#include "common/spin_lock.h"
#include "datapath/clocks.h"
#include "datapath/epochs.h"
#include "datapath/frame_capture.h"
#include "datapath/hop_latency.h"
#include "datapath/link_control.h"
#include "datapath/port_claim.h"
#include "datapath/port_counters.h"
#include "datapath/port_io.h"
#include "datapath/storm_control.h"
#include "model/switch_config.h"
#include "model/switch_model.h"
#include "model/token_bucket.h"
#include "policies/policy.h"

namespace sharebuf::datapath {

// Wakes a sleeping egress worker when its port's queues go from empty to non-empty. The worker
// announces `sleeping` and re-checks its queues before waiting; an enqueuer publishes its frame,
// then checks `sleeping` (a seq_cst fence on each side: Dekker), so no wake-up is lost.
struct alignas(64) EgressSignal {
  std::atomic<bool> sleeping{false};
  std::atomic<uint32_t> seq{0};

  void wake_if_sleeping() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping.load(std::memory_order_relaxed)) wake();
  }
  void wake() noexcept {
    seq.fetch_add(1, std::memory_order_release);
    seq.notify_one();
  }
};

struct PortRuntime {
  explicit PortRuntime(const model::PortConfig& cfg) : config(cfg) {}
  model::PortConfig config;
  // Declared before `io`: the sockets close before the claim restores the interface.
  std::unique_ptr<PortClaim> claim;
  LinkInfo link;               // as found at the start (claim->link())
  std::unique_ptr<PortIo> io;  // AfPacketPort in the daemon; MemoryPort in tests
  PortCounters counters;
  HopLatency latency;
  StormControl storm;  // under storm_lock: in per-CPU mode every RX worker reads the port
  common::SpinLock storm_lock;
  EgressSignal signal;
  // Owned by whoever holds tx_owned (EgressPath): the egress worker, or an RX worker sending
  // inline while the egress worker sleeps.
  std::atomic<bool> tx_owned{false};
  // The RX ring (and the RX-side state: storm, RX counters) belongs to whoever holds rx_owned:
  // the port's RX worker, or another RX worker taking the frames that arrived while it sent
  // inline to this port (rx_worker.cpp).
  std::atomic<bool> rx_owned{false};
  // Set while the worker that reads this port's ring is blocked (in poll() or parked): another
  // worker that sent inline to this port then takes the answer from the ring rather than leave it
  // to a wake-up; while the reader runs it is left to it (rx_worker.cpp). A hint: a stale value
  // costs a wake-up or a shared read, never a frame.
  std::atomic<bool> rx_asleep{false};
  // Per-CPU RX: per bucket of flow hashes, the newest ring stamp any worker has taken from this
  // port; a frame stamped before its flow's newest was taken out of the order it arrived in
  // (counters.rx_out_of_order). Flows that share a bucket can count each other's interleaving.
  static constexpr uint32_t kOrderBuckets = 64;
  alignas(64) std::array<std::atomic<uint64_t>, kOrderBuckets> rx_newest_stamp{};
  // The shaper (owned by the TX owner); the port's scheduler, departure clock and probe charge
  // are the model's (SwitchModel::port), owned by the same TX owner.
  model::TokenBucket shaper;
  // The port's line (shaped) rate, 0 = unshaped: written by the control thread
  // (SwitchControl::set_port_rate), read by anyone; the TX owner applies a change to the shaper
  // and the departure clock at its next burst (one relaxed load per burst).
  std::atomic<uint64_t> line_rate_bps{0};
};

struct SwitchCore {
  explicit SwitchCore(const model::SwitchConfig& cfg);

  model::SwitchModel switch_model;
  // The model's, under the names the datapath reads them by.
  const model::SwitchConfig& config() const noexcept { return switch_model.config(); }
  buffer::SharedBuffer& buffer() noexcept { return switch_model.buffer(); }
  const buffer::SharedBuffer& buffer() const noexcept { return switch_model.buffer(); }
  policies::Policy& policy() const noexcept { return switch_model.policy(); }
  // Sets port p's shaper and departure clock to `rate_bps` (its TX owner, or before the threads
  // start).
  void apply_rate(uint32_t p, uint64_t rate_bps, uint32_t mtu) noexcept;
  // Worker slots of the epoch domain (datapath/epochs.h): egress worker of port p: p; RX worker
  // t: ports + t; the daemon's main thread (stats on SIGUSR1): aux_slot().
  EpochDomain epochs;
  uint32_t rx_slot(uint32_t t) const noexcept { return static_cast<uint32_t>(ports.size()) + t; }
  uint32_t aux_slot() const noexcept {
    return static_cast<uint32_t>(ports.size()) + model::rx_workers(config());
  }
  // One reader at a time in the aux slot (SIGUSR1's stats, the [metrics] listener's scrapes):
  // an epoch slot announces one thread. Forwarding threads never take it.
  mutable std::mutex aux_mutex;
  // Replaces the active policy live (control thread only): the new one is installed on the
  // current occupancy, then published; RX workers pick it up at their next batch, egress workers
  // at their next burst. The old one is retired and freed by reclaim() once no worker can hold
  // it any more.
  void install_policy(std::unique_ptr<policies::Policy> next);
  // An active capture, or null. Set and cleared by the control thread; a stopped capture is
  // closed at once and its object retired like a policy.
  std::atomic<FrameCapture*> capture{nullptr};
  void start_capture(std::unique_ptr<FrameCapture> next);
  FrameCapture* stop_capture();  // the stopped capture, valid until the next reclaim(); or null
  // Frees what retired objects no worker can hold any more (control thread). Returns how many
  // are still waiting.
  size_t reclaim();
  size_t retired_pending() const noexcept {
    return retired_policies_.size() + retired_captures_.size();
  }
  uint64_t reclaimed() const noexcept { return reclaimed_; }
  std::vector<std::unique_ptr<PortRuntime>> ports;
  std::atomic<bool> stop_rx{false};
  std::atomic<bool> stop_egress{false};
  int stop_fd = -1;  // eventfd: readable once stop_rx is set, wakes RX workers from poll()
  // Parking (rx_worker.h), one entry per RX worker: `parked` while the first worker reads its
  // rings; `wake_fd` (eventfd) wakes it: for worker 0 "a worker parked, poll its rings too", for
  // the others "unparked: read your rings again".
  struct RxParking {
    std::atomic<bool> parked{false};
    std::atomic<uint64_t> parks{0};    // times it parked
    std::atomic<uint64_t> unparks{0};  // times the first worker found its rings busy and woke it
    // Frames the worker took from rings (its own, parked workers', answers); its own cache line:
    // written by the worker on every burst.
    alignas(64) std::atomic<uint64_t> frames{0};
    // While the worker admits a burst: a time no later than the burst's (kNotAdmitting between
    // bursts). No worker releases a deflected frame that left its recirculation port after it
    // (RxWorker::release_deflected): events act in time order across workers.
    static constexpr uint64_t kNotAdmitting = UINT64_MAX;
    std::atomic<uint64_t> admitting_ns{kNotAdmitting};
    int wake_fd = -1;
    std::vector<uint32_t> ports;  // the ports the worker reads
  };
  std::vector<std::unique_ptr<RxParking>> rx_parking;

 private:
  template <typename T>
  struct Retired {
    std::unique_ptr<T> object;
    uint64_t epoch;
  };
  std::vector<Retired<policies::Policy>> retired_policies_;
  std::unique_ptr<FrameCapture> capture_owner_;
  std::vector<Retired<FrameCapture>> retired_captures_;
  uint64_t reclaimed_ = 0;
};

}  // namespace sharebuf::datapath

// SwitchCore: the state every datapath thread shares — the shared buffer, the active policy, the
// MAC table, the classifier, and per port its socket pair, counters, scheduler, shaper and the
// egress worker's wake-up signal. Switch (switch.h) owns it and the threads.
//
// Thread-safety: the policy pointer is an atomic that RX workers load once per batch and egress
// workers once per frame (a live switch publishes a new policy and retires the old one when no
// worker can hold it). `stop_rx`/`stop_egress` are set by the control thread. Each Port's RX
// fields belong to its RX worker and its TX fields (scheduler, shaper) to its egress worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "buffer/shared_buffer.h"
#include "datapath/af_packet_port.h"
#include "datapath/classifier.h"
#include "datapath/departure_clock.h"
#include "datapath/frame_capture.h"
#include "datapath/link_control.h"
#include "datapath/mac_table.h"
#include "datapath/port_counters.h"
#include "datapath/scheduler.h"
#include "datapath/switch_config.h"
#include "datapath/token_bucket.h"
#include "policies/policy.h"

namespace sharebuf::datapath {

uint64_t monotonic_ns() noexcept;

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
  PortRuntime(const PortConfig& cfg)
      : config(cfg), scheduler(cfg.scheduler, cfg.num_queues, cfg.weights) {}
  PortConfig config;
  LinkInfo link;
  std::unique_ptr<AfPacketPort> io;
  PortCounters counters;
  EgressSignal signal;
  // Owned by whoever holds tx_owned (EgressPath): the egress worker, or an RX worker sending
  // inline while the egress worker sleeps.
  std::atomic<bool> tx_owned{false};
  Scheduler scheduler;
  TokenBucket shaper;
  DepartureClock clock;
};

struct SwitchCore {
  explicit SwitchCore(const SwitchConfig& cfg);

  SwitchConfig config;
  buffer::SharedBuffer buffer;
  policies::PolicyEnv env;
  std::unique_ptr<policies::Policy> policy_owner;
  std::atomic<policies::Policy*> policy{nullptr};
  // Replaces the active policy live (control thread only): the new one is installed on the
  // current occupancy, then published; RX workers pick it up at their next batch, egress workers
  // at their next frame. A worker may still hold the old pointer for a moment, so retired
  // policies are kept until the switch is destroyed (a few KB each).
  void install_policy(std::unique_ptr<policies::Policy> next);
  std::vector<std::unique_ptr<policies::Policy>> retired_policies;
  // An active capture, or null. Set and cleared by the control thread; like policies, a stopped
  // capture is closed at once but its object is kept until the switch is destroyed.
  std::atomic<FrameCapture*> capture{nullptr};
  std::vector<std::unique_ptr<FrameCapture>> captures;
  MacTable macs;
  Classifier classifier;
  std::vector<std::unique_ptr<PortRuntime>> ports;
  std::atomic<bool> stop_rx{false};
  std::atomic<bool> stop_egress{false};
  int stop_fd = -1;  // eventfd: readable once stop_rx is set, wakes RX workers from poll()
};

}  // namespace sharebuf::datapath

// EgressWorker: the thread that owns one port's EgressPath. It sends bursts as the scheduler and
// shaper allow, sleeps for the shaper's wait, waits for TX ring slots, and with nothing to send
// hands the path over (RX workers may then send inline) and sleeps
// (futex) until an RX worker wakes it; frames the wire refused, with nothing queued behind them,
// are tried again kStagedRetryNs later.
#pragma once

#include <cstdint>

#include "datapath/egress_path.h"
#include "datapath/switch_core.h"

namespace sharebuf::datapath {

class EgressWorker {
 public:
  static constexpr uint32_t kBurst = 32;
  // With frames staged that the wire refused and nothing queued behind them, the worker tries
  // again this much later.
  static constexpr uint64_t kStagedRetryNs = 50'000;

  EgressWorker(SwitchCore& core, uint32_t port) : core_(core), port_(port), path_(core, port) {}
  void run();

 private:
  void sleep_until_work();
  void retry_staged();

  SwitchCore& core_;
  uint32_t port_;
  EgressPath path_;
};

}  // namespace sharebuf::datapath

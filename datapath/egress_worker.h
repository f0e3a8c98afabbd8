// EgressWorker: the thread that owns one port's EgressPath. It sends bursts as the scheduler and
// shaper allow, sleeps for the shaper's wait, waits for TX ring slots, and with nothing to send
// hands the path over (RX workers may then send inline) and sleeps
// (futex) until an RX worker wakes it.
#pragma once

#include <cstdint>

#include "datapath/egress_path.h"
#include "datapath/switch_core.h"

namespace sharebuf::datapath {

class EgressWorker {
 public:
  static constexpr uint32_t kBurst = 32;

  EgressWorker(SwitchCore& core, uint32_t port) : core_(core), port_(port), path_(core, port) {}
  void run();

 private:
  void sleep_until_work();

  SwitchCore& core_;
  uint32_t port_;
  EgressPath path_;
};

}  // namespace sharebuf::datapath

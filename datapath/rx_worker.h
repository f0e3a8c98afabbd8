// RxWorker: the receive side of one port. It reads frames from the port's RX ring in bursts,
// parses them, learns the source MAC, finds the out port(s), classifies, and admits one copy per
// out port into the shared buffer through the policy (datapath/admission_step.h), waking the out
// port's egress worker. It blocks in poll() when the ring is empty.
#pragma once

#include <cstdint>
#include <vector>

#include "buffer/cell_pool.h"
#include "datapath/af_packet_port.h"
#include "datapath/switch_core.h"

namespace sharebuf::datapath {

class RxWorker {
 public:
  static constexpr int kBurst = 64;
  // Frames an RX worker sends inline for an idle port before handing over to its egress worker.
  static constexpr uint32_t kInlineBudget = 8;

  RxWorker(SwitchCore& core, uint32_t port) : core_(core), port_(port) {}
  void run();

 private:
  void handle(const RxFrame& rx, policies::Policy& policy, const buffer::BufferView& view,
              uint64_t now_ns, buffer::CellCache& cache);
  void admit_copy(uint32_t out_port, std::span<uint8_t> frame, const ParsedFrame& parsed,
                  uint8_t class_id, bool& marked, policies::Policy& policy,
                  const buffer::BufferView& view, uint64_t now_ns, buffer::CellCache& cache);

  SwitchCore& core_;
  uint32_t port_;
  std::vector<uint8_t> scratch_;  // a frame with its VLAN tag put back
};

}  // namespace sharebuf::datapath

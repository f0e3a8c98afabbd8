// Switch: a running sharebuf switch. It opens the ports (libnl + AF_PACKET), starts one RX and
// one egress worker per port, and stops them in order: RX first (no new frames), then egress
// (after draining, if configured), so the queues can be reported before their frames are freed.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "datapath/port_io.h"
#include "datapath/switch_control.h"
#include "datapath/xsk_umem.h"
#include "model/switch_config.h"

namespace sharebuf::datapath {

struct SwitchCore;

class Switch {
 public:
  // Opens every port. Throws std::runtime_error (interface missing, no permission, ...) or
  // policies::ConfigError (bad policy parameters).
  explicit Switch(const model::SwitchConfig& config);
  // A switch over ports the caller made, one per configured port in order (in-memory ports in the
  // datapath's tests, datapath/memory_port.h): no interface is claimed or inspected; everything
  // else as above. Throws std::invalid_argument if the counts differ.
  Switch(const model::SwitchConfig& config, std::vector<std::unique_ptr<PortIo>> ports);
  ~Switch();
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  void start();
  // Stops every worker; returns within about a second. Queued frames stay in the buffer (and
  // accounted) until release_queued().
  void stop();
  // Frees every queued frame; afterwards every cell is back in the pool.
  void release_queued();

  // What management code uses (datapath/switch_control.h).
  SwitchControl& control() noexcept { return *control_; }
  // The insides, for the datapath's own tests.
  SwitchCore& core() noexcept { return *core_; }
  // Re-reads every port's MTU (the daemon's main thread, about once a second). A changed MTU
  // becomes the port's egress limit at once; the messages say what changed and what the RX ring,
  // sized at the start, still truncates.
  std::vector<std::string> check_links();
  // Problems found at start that the user should hear about (offloads, ...).
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

 private:
  // Before core_: the ports' sockets and the buffer's queued frames use it until core_ is gone.
  std::unique_ptr<XskUmem> umem_;
  std::unique_ptr<SwitchCore> core_;
  std::unique_ptr<SwitchControl> control_;
  std::vector<std::thread> rx_threads_;
  std::vector<std::thread> egress_threads_;
  std::vector<std::string> warnings_;
  bool running_ = false;
};

}  // namespace sharebuf::datapath

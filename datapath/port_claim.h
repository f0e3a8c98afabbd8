// PortClaim: what the switch holds of one interface while it runs, undone on every exit. Claiming
// locks the port for this process (PortLock: a second daemon is refused), reads the interface,
// recognises the record of an owner that crashed (its promiscuity and link state from before are
// the ones to restore), writes this owner's record, then sets the interface up and promiscuous.
// Destroying the claim restores the interface and removes the lock; after a crash the next claim
// does it instead.
#pragma once

#include <memory>
#include <string>

#include "datapath/link_control.h"
#include "datapath/port_lock.h"

namespace sharebuf::datapath {

class PortClaim {
 public:
  // Throws PortInUse, or std::runtime_error naming the interface and the reason.
  PortClaim(const std::string& lock_dir, const std::string& ifname);
  ~PortClaim();
  PortClaim(const PortClaim&) = delete;
  PortClaim& operator=(const PortClaim&) = delete;

  // As found when claimed; was_promisc/was_up are the state restored at the end (from a crashed
  // owner's record when there was one).
  const LinkInfo& link() const noexcept { return link_; }
  // A message if the port was left claimed by an owner that did not exit cleanly, else empty.
  const std::string& recovered() const noexcept { return recovered_; }

 private:
  LinkInfo link_;
  std::unique_ptr<PortLock> lock_;
  bool taken_ = false;
  std::string recovered_;
};

}  // namespace sharebuf::datapath

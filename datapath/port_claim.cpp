#include "datapath/port_claim.h"

#include <unistd.h>

namespace sharebuf::datapath {
namespace {

std::string on_off(bool on) {
  return on ? "on" : "off";
}

}  // namespace

PortClaim::PortClaim(const std::string& lock_dir, const std::string& ifname) {
  link_ = read_link(ifname);
  lock_ = std::make_unique<PortLock>(lock_dir, port_lock_key(link_.ifindex), "port " + ifname);
  if (const auto& prev = lock_->previous()) {
    // Only a record of this very interface: namespace inodes and ifindexes are reused once a
    // namespace is gone, and a stale file may describe an interface that no longer exists.
    if (prev->ifname == link_.name && prev->mac == link_.mac) {
      recovered_ =
          "port " + ifname + " was left by sharebufd pid " + std::to_string(prev->pid) +
          ", which did not exit cleanly; restoring what it found at the end: " + "promiscuous " +
          on_off(prev->promisc_before) + ", link " + (prev->up_before ? "up" : "down") +
          " (now promiscuous " + on_off(link_.was_promisc) + ", link " +
          (link_.was_up ? "up" : "down") + ")";
      link_.was_promisc = prev->promisc_before;
      link_.was_up = prev->up_before;
    }
  }
  lock_->write(PortRecord{.pid = getpid(),
                          .ifname = link_.name,
                          .mac = link_.mac,
                          .promisc_before = link_.was_promisc,
                          .up_before = link_.was_up});
  taken_ = true;
  take_link(link_, /*promisc=*/true);
}

PortClaim::~PortClaim() {
  if (taken_) restore_link(link_);
}

}  // namespace sharebuf::datapath

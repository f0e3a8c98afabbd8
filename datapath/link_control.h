// Interface control for the ports: look an interface up, bring it up and make it promiscuous with
// libnl-route-3 (restoring promiscuity on close), read its MTU and MAC, and read its offload
// settings with the ethtool ioctl so the daemon can warn when segmentation or checksum offloads
// will hand it frames larger than the MTU or with partial checksums.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sharebuf::datapath {

struct LinkInfo {
  std::string name;
  int ifindex = 0;
  uint32_t mtu = 1500;
  uint64_t mac = 0;
  bool was_promisc = false;
};

// Throws std::runtime_error naming the interface and the reason.
LinkInfo bring_up_link(const std::string& name, bool promisc);
// Turns promiscuous mode back off if bring_up_link turned it on. Never throws.
void restore_link(const LinkInfo& link) noexcept;

struct OffloadState {
  bool tx_checksum = false;
  bool tso = false;
  bool gso = false;
  bool gro = false;
  bool readable = false;  // false if the ioctl failed (then nothing is known)
};
OffloadState read_offloads(const std::string& name) noexcept;
// Human-readable names of the offloads that are on ("tx-checksum", "tso", ...).
std::vector<std::string> risky_offloads(const OffloadState& s);

}  // namespace sharebuf::datapath

// Interface control for the ports: look an interface up, bring it up and make it promiscuous with
// libnl-route-3 (and undo exactly what was changed), read its MTU and MAC, and read its offload
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
  // The state to return the interface to when the switch lets it go.
  bool was_promisc = false;
  bool was_up = false;
};

// Reads the interface. Throws std::runtime_error naming the interface and the reason.
LinkInfo read_link(const std::string& name);
// Sets it up (and promiscuous). Throws std::runtime_error naming the interface and the reason.
void take_link(const LinkInfo& link, bool promisc);
// Turns promiscuous mode off and the link down again where `link` says they were. Never throws.
void restore_link(const LinkInfo& link) noexcept;
// The interface's MTU now (SIOCGIFMTU), or 0 if it cannot be read (the interface is gone).
uint32_t read_mtu(const std::string& name) noexcept;

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

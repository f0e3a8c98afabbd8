// Interface control for the ports: look an interface up, bring it up and make it promiscuous with
// libnl-route-3 (and undo exactly what was changed), read its MTU and MAC, and read its offload
// settings with the ethtool ioctl so the daemon can warn when segmentation or checksum offloads
// will hand it frames larger than the MTU or with partial checksums, and whether a veth port
// receives in order (through NAPI, or steered per flow by RPS), without which the kernel reorders
// a flow sent from two CPUs.
#pragma once

#include <cstdint>
#include <optional>
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
// The frames the interface has received (its rx_packets, IFLA_STATS64 by RTM_GETLINK), or nullopt
// if it cannot be read.
std::optional<uint64_t> read_link_rx_packets(int ifindex) noexcept;

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

// The interface's driver ("veth", "mlx5_core", ...) by the ethtool ioctl; empty if unreadable.
std::string read_driver(const std::string& name) noexcept;

// Whether any of the interface's receive queues steers frames to CPUs (a nonzero rps_cpus), read
// from `sysfs_net`/NAME/queues/rx-*/rps_cpus. A veth without NAPI hands each frame to the backlog
// of the CPU that transmitted it, so a sender transmitting one flow from two CPUs (a TCP sender
// does: from its application's CPU and from the one its ACKs arrive on) has its frames race each
// other to the switch's ring; RPS puts each flow on one CPU's backlog, in order. nullopt if it
// cannot be read, or if `sysfs_net` shows another interface of that name (sysfs mounted for
// another network namespace: its ifindex differs).
std::optional<bool> rps_steered(const std::string& name, int ifindex,
                                const std::string& sysfs_net = "/sys/class/net");

// Whether an XDP program is attached to the interface (IFLA_XDP_ATTACHED by RTM_GETLINK). On a
// veth any program, even one that passes every frame, makes it receive through NAPI: one ring
// per receive queue, drained in the order the frames were sent. nullopt if it cannot be read.
std::optional<bool> xdp_attached(int ifindex) noexcept;

struct XdpState {
  uint8_t attached = 0;         // XDP_ATTACHED_NONE, _DRV, _SKB, _HW or _MULTI
  uint32_t driver_prog_id = 0;  // the program attached in driver mode; 0 if none
};
// The interface's XDP programs (RTM_GETLINK); nullopt if they cannot be read.
std::optional<XdpState> read_xdp(int ifindex) noexcept;
// Attaches the BPF program `prog_fd` to the interface in driver mode, replacing the one there, or
// detaches the driver-mode program if prog_fd is -1. Throws std::runtime_error naming the
// interface and the kernel's reason.
void set_xdp_program(const std::string& name, int ifindex, int prog_fd);

}  // namespace sharebuf::datapath

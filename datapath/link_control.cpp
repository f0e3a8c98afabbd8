#include "datapath/link_control.h"

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace sharebuf::datapath {
namespace {

struct NlSockDeleter {
  void operator()(nl_sock* s) const noexcept { nl_socket_free(s); }
};
struct LinkDeleter {
  void operator()(rtnl_link* l) const noexcept { rtnl_link_put(l); }
};
using NlSock = std::unique_ptr<nl_sock, NlSockDeleter>;
using Link = std::unique_ptr<rtnl_link, LinkDeleter>;

NlSock connect_route() {
  NlSock sock(nl_socket_alloc());
  if (!sock) throw std::runtime_error("netlink: out of memory");
  if (int err = nl_connect(sock.get(), NETLINK_ROUTE); err < 0) {
    throw std::runtime_error(std::string("netlink: cannot connect: ") + nl_geterror(err));
  }
  return sock;
}

Link get_link(nl_sock* sock, const std::string& name) {
  rtnl_link* raw = nullptr;
  if (int err = rtnl_link_get_kernel(sock, 0, name.c_str(), &raw); err < 0) {
    throw std::runtime_error("interface '" + name + "': " + nl_geterror(err));
  }
  return Link(raw);
}

void change_flags(nl_sock* sock, rtnl_link* link, unsigned set, unsigned unset,
                  const std::string& name) {
  Link change(rtnl_link_alloc());
  if (set != 0) rtnl_link_set_flags(change.get(), set);
  if (unset != 0) rtnl_link_unset_flags(change.get(), unset);
  if (int err = rtnl_link_change(sock, link, change.get(), 0); err < 0) {
    throw std::runtime_error("interface '" + name + "': cannot change flags: " + nl_geterror(err));
  }
}

// One SIOCETHTOOL request on interface `name`; `data` starts with its ethtool command.
bool ethtool_ioctl(int fd, const std::string& name, void* data) noexcept {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(data);
  return ioctl(fd, SIOCETHTOOL, &ifr) == 0;
}

bool ethtool_get(int fd, const std::string& name, uint32_t cmd, bool& out) noexcept {
  ethtool_value value{};
  value.cmd = cmd;
  if (!ethtool_ioctl(fd, name, &value)) return false;
  out = value.data != 0;
  return true;
}

}  // namespace

LinkInfo read_link(const std::string& name) {
  NlSock sock = connect_route();
  Link link = get_link(sock.get(), name);
  LinkInfo info;
  info.name = name;
  info.ifindex = rtnl_link_get_ifindex(link.get());
  info.mtu = rtnl_link_get_mtu(link.get());
  const unsigned flags = rtnl_link_get_flags(link.get());
  info.was_promisc = (flags & IFF_PROMISC) != 0;
  info.was_up = (flags & IFF_UP) != 0;
  if (nl_addr* addr = rtnl_link_get_addr(link.get());
      addr != nullptr && nl_addr_get_len(addr) == 6) {
    const auto* b = static_cast<const uint8_t*>(nl_addr_get_binary_addr(addr));
    for (int i = 0; i < 6; ++i)
      info.mac = (info.mac << 8) | b[i];
  }
  return info;
}

void take_link(const LinkInfo& info, bool promisc) {
  NlSock sock = connect_route();
  Link link = get_link(sock.get(), info.name);
  unsigned want = IFF_UP;
  if (promisc) want |= IFF_PROMISC;
  if ((rtnl_link_get_flags(link.get()) & want) != want) {
    change_flags(sock.get(), link.get(), want, 0, info.name);
  }
}

void restore_link(const LinkInfo& link) noexcept {
  unsigned unset = 0;
  if (!link.was_promisc) unset |= IFF_PROMISC;
  if (!link.was_up) unset |= IFF_UP;
  if (unset == 0) return;
  try {
    NlSock sock = connect_route();
    Link l = get_link(sock.get(), link.name);
    if ((rtnl_link_get_flags(l.get()) & unset) != 0)
      change_flags(sock.get(), l.get(), 0, unset, link.name);
  } catch (...) {
    // The interface may be gone already (namespace torn down): nothing to restore.
  }
}

uint32_t read_mtu(const std::string& name) noexcept {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  const int rc = ioctl(fd, SIOCGIFMTU, &ifr);
  close(fd);
  return rc == 0 && ifr.ifr_mtu > 0 ? static_cast<uint32_t>(ifr.ifr_mtu) : 0;
}

OffloadState read_offloads(const std::string& name) noexcept {
  OffloadState s;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return s;
  s.readable = ethtool_get(fd, name, ETHTOOL_GTXCSUM, s.tx_checksum);
  s.readable = ethtool_get(fd, name, ETHTOOL_GTSO, s.tso) && s.readable;
  s.readable = ethtool_get(fd, name, ETHTOOL_GGSO, s.gso) && s.readable;
  s.readable = ethtool_get(fd, name, ETHTOOL_GGRO, s.gro) && s.readable;
  close(fd);
  return s;
}

std::vector<std::string> risky_offloads(const OffloadState& s) {
  std::vector<std::string> out;
  if (s.tx_checksum) out.emplace_back("tx-checksumming");
  if (s.tso) out.emplace_back("tcp-segmentation-offload");
  if (s.gso) out.emplace_back("generic-segmentation-offload");
  if (s.gro) out.emplace_back("generic-receive-offload");
  return out;
}

std::optional<XdpState> read_xdp(int ifindex) noexcept {
  try {
    NlSock sock = connect_route();
    ifinfomsg req{};
    req.ifi_family = AF_UNSPEC;
    req.ifi_index = ifindex;
    if (nl_send_simple(sock.get(), RTM_GETLINK, 0, &req, sizeof(req)) < 0) return std::nullopt;
    std::optional<XdpState> reply;
    auto parse = [](nl_msg* msg, void* arg) -> int {
      nlattr* link[IFLA_MAX + 1];
      nlattr* xdp[IFLA_XDP_MAX + 1];
      auto* out = static_cast<std::optional<XdpState>*>(arg);
      if (nlmsg_parse(nlmsg_hdr(msg), sizeof(ifinfomsg), link, IFLA_MAX, nullptr) < 0) return NL_OK;
      XdpState state;  // a kernel without XDP sends no IFLA_XDP
      if (link[IFLA_XDP] != nullptr &&
          nla_parse_nested(xdp, IFLA_XDP_MAX, link[IFLA_XDP], nullptr) == 0 &&
          xdp[IFLA_XDP_ATTACHED] != nullptr) {
        state.attached = nla_get_u8(xdp[IFLA_XDP_ATTACHED]);
        // One program: IFLA_XDP_PROG_ID in its mode; several (driver and offload): per mode.
        if (xdp[IFLA_XDP_DRV_PROG_ID] != nullptr)
          state.driver_prog_id = nla_get_u32(xdp[IFLA_XDP_DRV_PROG_ID]);
        else if (state.attached == XDP_ATTACHED_DRV && xdp[IFLA_XDP_PROG_ID] != nullptr)
          state.driver_prog_id = nla_get_u32(xdp[IFLA_XDP_PROG_ID]);
      }
      *out = state;
      return NL_OK;
    };
    nl_socket_modify_cb(sock.get(), NL_CB_VALID, NL_CB_CUSTOM, parse, &reply);
    if (nl_recvmsgs_default(sock.get()) < 0) return std::nullopt;
    return reply;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<uint64_t> read_link_rx_packets(int ifindex) noexcept {
  try {
    NlSock sock = connect_route();
    ifinfomsg req{};
    req.ifi_family = AF_UNSPEC;
    req.ifi_index = ifindex;
    if (nl_send_simple(sock.get(), RTM_GETLINK, 0, &req, sizeof(req)) < 0) return std::nullopt;
    std::optional<uint64_t> reply;
    auto parse = [](nl_msg* msg, void* arg) -> int {
      nlattr* link[IFLA_MAX + 1];
      if (nlmsg_parse(nlmsg_hdr(msg), sizeof(ifinfomsg), link, IFLA_MAX, nullptr) < 0) return NL_OK;
      if (link[IFLA_STATS64] == nullptr ||
          nla_len(link[IFLA_STATS64]) < static_cast<int>(sizeof(rtnl_link_stats64)))
        return NL_OK;
      rtnl_link_stats64 stats;
      std::memcpy(&stats, nla_data(link[IFLA_STATS64]), sizeof stats);
      *static_cast<std::optional<uint64_t>*>(arg) = stats.rx_packets;
      return NL_OK;
    };
    nl_socket_modify_cb(sock.get(), NL_CB_VALID, NL_CB_CUSTOM, parse, &reply);
    if (nl_recvmsgs_default(sock.get()) < 0) return std::nullopt;
    return reply;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<bool> xdp_attached(int ifindex) noexcept {
  const std::optional<XdpState> state = read_xdp(ifindex);
  if (!state) return std::nullopt;
  return state->attached != XDP_ATTACHED_NONE;
}

void set_xdp_program(const std::string& name, int ifindex, int prog_fd) {
  NlSock sock = connect_route();
  std::unique_ptr<nl_msg, void (*)(nl_msg*)> msg(
      nlmsg_alloc_simple(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK), nlmsg_free);
  if (!msg) throw std::runtime_error("netlink: out of memory");
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  nlattr* xdp = nullptr;
  if (nlmsg_append(msg.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO) < 0 ||
      (xdp = nla_nest_start(msg.get(), IFLA_XDP)) == nullptr ||
      nla_put_s32(msg.get(), IFLA_XDP_FD, prog_fd) < 0 ||
      nla_put_u32(msg.get(), IFLA_XDP_FLAGS, XDP_FLAGS_DRV_MODE) < 0) {
    throw std::runtime_error("netlink: cannot build the XDP request");
  }
  nla_nest_end(msg.get(), xdp);
  int err = nl_send_auto(sock.get(), msg.get());
  if (err >= 0) err = nl_wait_for_ack(sock.get());
  if (err < 0) {
    throw std::runtime_error("interface '" + name + "': cannot " +
                             (prog_fd < 0 ? "detach" : "attach") +
                             " an XDP program in driver mode: " + nl_geterror(err));
  }
}

std::string read_driver(const std::string& name) noexcept {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  const bool ok = ethtool_ioctl(fd, name, &info);
  close(fd);
  if (!ok) return {};
  return std::string(info.driver, strnlen(info.driver, sizeof(info.driver)));
}

std::optional<bool> rps_steered(const std::string& name, int ifindex,
                                const std::string& sysfs_net) {
  namespace fs = std::filesystem;
  const fs::path dev = fs::path(sysfs_net) / name;
  int shown = -1;
  if (std::ifstream f(dev / "ifindex"); !(f >> shown) || shown != ifindex) return std::nullopt;
  std::error_code ec;
  bool any_queue = false;
  for (const auto& q : fs::directory_iterator(dev / "queues", ec)) {
    if (q.path().filename().string().rfind("rx-", 0) != 0) continue;
    std::ifstream f(q.path() / "rps_cpus");
    std::string mask;
    if (!std::getline(f, mask)) return std::nullopt;  // a kernel without CONFIG_RPS
    any_queue = true;
    // A hex bitmap in comma-separated 32-bit words ("3", "00000000,00000001").
    if (mask.find_first_not_of("0,") != std::string::npos) return true;
  }
  if (ec || !any_queue) return std::nullopt;
  return false;
}

}  // namespace sharebuf::datapath

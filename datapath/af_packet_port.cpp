#include "datapath/af_packet_port.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

#include "datapath/link_control.h"

namespace sharebuf::datapath {
namespace {

constexpr uint32_t kRingBlockBytes = 1u << 16;
constexpr size_t kMaxRingBytes = size_t{128} << 20;

std::runtime_error sys_error(const std::string& ifname, const std::string& what) {
  return std::runtime_error("port '" + ifname + "': " + what + ": " + std::strerror(errno));
}

uint32_t round_up_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

void set_int(int fd, int level, int option, int value, const std::string& ifname,
             const char* name) {
  if (setsockopt(fd, level, option, &value, sizeof value) != 0) {
    throw sys_error(ifname, std::string("setsockopt ") + name);
  }
}

int open_socket(const std::string& ifname, uint16_t protocol) {
  const int fd = socket(AF_PACKET, SOCK_RAW, htons(protocol));
  if (fd < 0) throw sys_error(ifname, "socket(AF_PACKET) (root or CAP_NET_RAW needed)");
  return fd;
}

void bind_socket(int fd, const std::string& ifname, int ifindex, uint16_t protocol) {
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(protocol);
  addr.sll_ifindex = ifindex;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw sys_error(ifname, "bind");
  }
}

}  // namespace

AfPacketPort::Ring AfPacketPort::setup_ring(int fd, int option, uint32_t frame_size,
                                            uint32_t frames, const std::string& what) {
  Ring ring;
  ring.frame_size = frame_size;
  const uint32_t per_block = kRingBlockBytes / frame_size;
  uint32_t blocks = (frames + per_block - 1) / per_block;
  while (size_t{blocks} * kRingBlockBytes > kMaxRingBytes && blocks > 1)
    --blocks;
  tpacket_req req{};
  req.tp_block_size = kRingBlockBytes;
  req.tp_block_nr = blocks;
  req.tp_frame_size = frame_size;
  req.tp_frame_nr = blocks * per_block;
  if (setsockopt(fd, SOL_PACKET, option, &req, sizeof req) != 0) {
    throw sys_error(what, option == PACKET_RX_RING ? "PACKET_RX_RING" : "PACKET_TX_RING");
  }
  ring.frames = req.tp_frame_nr;
  ring.bytes = size_t{blocks} * kRingBlockBytes;
  void* mem = mmap(nullptr, ring.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, fd, 0);
  if (mem == MAP_FAILED) {
    // MAP_LOCKED can fail under a low RLIMIT_MEMLOCK; the ring works without it.
    mem = mmap(nullptr, ring.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (mem == MAP_FAILED) throw sys_error(what, "mmap ring");
  ring.base = static_cast<uint8_t*>(mem);
  return ring;
}

void AfPacketPort::open_rx_lane(RxLane& lane, int ifindex, uint32_t frame_size,
                                uint32_t rx_frames) {
  lane.fd = open_socket(name(), ETH_P_ALL);
  set_int(lane.fd, SOL_PACKET, PACKET_VERSION, TPACKET_V2, name(), "PACKET_VERSION");
  set_int(lane.fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, name(), "PACKET_IGNORE_OUTGOING");
  lane.ring = setup_ring(lane.fd, PACKET_RX_RING, frame_size, rx_frames, name());
  bind_socket(lane.fd, name(), ifindex, ETH_P_ALL);
}

void AfPacketPort::join_fanout(uint32_t lanes) {
  // The first socket asks the kernel for a group id no other group in the namespace uses; the
  // others join it in lane order, which is the order PACKET_FANOUT_CPU indexes them by
  // (fanout_demux_cpu: smp_processor_id() % members).
  const int first = (PACKET_FANOUT_CPU | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
  if (setsockopt(rx_[0].fd, SOL_PACKET, PACKET_FANOUT, &first, sizeof first) != 0)
    throw sys_error(name(), "setsockopt PACKET_FANOUT (fanout by CPU)");
  int group = 0;
  socklen_t len = sizeof group;
  if (getsockopt(rx_[0].fd, SOL_PACKET, PACKET_FANOUT, &group, &len) != 0)
    throw sys_error(name(), "getsockopt PACKET_FANOUT");
  const int join = (PACKET_FANOUT_CPU << 16) | (group & 0xffff);
  for (uint32_t i = 1; i < lanes; ++i) {
    if (setsockopt(rx_[i].fd, SOL_PACKET, PACKET_FANOUT, &join, sizeof join) != 0)
      throw sys_error(name(), "setsockopt PACKET_FANOUT (joining lane " + std::to_string(i) + ")");
  }
}

AfPacketPort::AfPacketPort(const std::string& ifname, int ifindex, uint32_t mtu, uint32_t rx_frames,
                           uint32_t tx_batch, uint32_t rx_lanes, bool rx_xdp, bool xdp_busy_poll,
                           bool tx_xdp, XskUmem* shared_umem)
    : PortIo(ifname, mtu), rx_(rx_xdp ? 0 : std::max<uint32_t>(1, rx_lanes)) {
  if (tx_xdp && !rx_xdp)
    throw std::runtime_error("port '" + ifname + "': AF_XDP transmit needs AF_XDP receive");
  // Room for the TPACKET header, Ethernet + two VLAN tags, and the MTU.
  const uint32_t frame_size = round_up_pow2(TPACKET_ALIGN(TPACKET2_HDRLEN) + 14 + 8 + mtu + 64);
  try {
    for (RxLane& lane : rx_)
      open_rx_lane(lane, ifindex, frame_size, rx_frames);
    if (rx_.size() > 1) join_fanout(static_cast<uint32_t>(rx_.size()));
    // The kernel puts the network header of a frame at TPACKET_ALIGN(header + 16) into the slot
    // (tpacket_rcv's netoff; maclen is 14 for Ethernet), so the frame starts 14 bytes before it.
    set_rx_capacity(frame_size - static_cast<uint32_t>(TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - 14));
    if (rx_xdp) {
      // What the kernel or driver refuses, given up in this order, each said once in the log:
      // the shared UMEM (the port's sockets get their own), then the TX ring (sending with
      // sendmmsg). If receiving is what fails, the last attempt fails again and says why.
      XskUmem* umem = shared_umem;
      for (;;) {
        try {
          xsk_ = std::make_unique<XskPort>(ifname, ifindex, mtu, rx_frames, xdp_busy_poll,
                                           tx_xdp ? kXdpTxFrames : 0, umem);
          break;
        } catch (const std::runtime_error& e) {
          if (umem != nullptr) {
            spdlog::warn(
                "port '{}': the shared AF_XDP UMEM refused ({}); its sockets get UMEMs "
                "of their own",
                ifname, e.what());
            umem = nullptr;
          } else if (tx_xdp) {
            spdlog::warn("port '{}': AF_XDP transmit refused ({}); sending with sendmmsg", ifname,
                         e.what());
            tx_xdp = false;
          } else {
            throw;
          }
        }
      }
      set_rx_capacity(xsk_->capacity());
      set_chunks(xsk_->chunks(), tx_xdp ? xsk_->chunks() : nullptr);
    }
    if (tx_xdp) {
      // The staging slots are the socket's transmit chunks; no AF_PACKET socket sends.
      init_tx_buffers(xsk_->capacity(), tx_batch);
      for (uint32_t i = 0; i < this->tx_batch(); ++i)
        set_tx_frame(i, xsk_->tx_take());
    } else {
      // Protocol 0: this socket receives nothing, it only sends.
      tx_fd_ = open_socket(ifname, 0);
      set_int(tx_fd_, SOL_PACKET, PACKET_QDISC_BYPASS, 1, ifname, "PACKET_QDISC_BYPASS");
      bind_socket(tx_fd_, ifname, ifindex, 0);
      init_tx(frame_size, tx_batch);
      for (uint32_t i = 0; i < this->tx_batch(); ++i) {
        tx_msgs_[i] = mmsghdr{};
        tx_msgs_[i].msg_hdr.msg_iov = &tx_iov_[i];
        tx_msgs_[i].msg_hdr.msg_iovlen = 1;
      }
    }
  } catch (...) {
    close_all();
    throw;
  }
  // Discard what was counted before the rings were ready; the interface's count starts here too.
  for (uint32_t i = 0; i < rx_.size(); ++i)
    rx_socket_stats(i);
  ifindex_ = ifindex;
  if_rx_base_ = read_link_rx_packets(ifindex).value_or(0);
}

AfPacketPort::~AfPacketPort() {
  close_all();
}

void AfPacketPort::close_all() noexcept {
  xsk_.reset();
  for (RxLane& lane : rx_) {
    if (lane.ring.base != nullptr) munmap(lane.ring.base, lane.ring.bytes);
    lane.ring.base = nullptr;
    if (lane.fd >= 0) close(lane.fd);
    lane.fd = -1;
  }
  if (tx_fd_ >= 0) close(tx_fd_);
  tx_fd_ = -1;
}

uint32_t AfPacketPort::rx_burst(RxFrame* frames, uint32_t max, uint32_t lane) noexcept {
  if (xsk_ != nullptr) return xsk_->peek_burst(frames, max);
  RxLane& l = rx_[lane];
  const Ring& ring = l.ring;
  uint32_t n = 0;
  for (uint32_t slot = ring.next; n < max && n < ring.frames; slot = (slot + 1) % ring.frames) {
    auto* hdr = reinterpret_cast<tpacket2_hdr*>(ring.frame(slot));
    // acquire pairs with the kernel's release of the slot (smp_wmb before setting tp_status).
    const uint32_t status = __atomic_load_n(&hdr->tp_status, __ATOMIC_ACQUIRE);
    if ((status & TP_STATUS_USER) == 0) break;
    RxFrame& frame = frames[n++];
    frame.data = reinterpret_cast<const uint8_t*>(hdr) + hdr->tp_mac;
    frame.len = hdr->tp_snaplen;
    frame.wire_len = hdr->tp_len;
    frame.vlan_valid = (status & TP_STATUS_VLAN_VALID) != 0;
    frame.vlan_tci = hdr->tp_vlan_tci;
    frame.vlan_tpid = (status & TP_STATUS_VLAN_TPID_VALID) != 0 ? hdr->tp_vlan_tpid : 0x8100;
    frame.checksum_partial = (status & TP_STATUS_CSUMNOTREADY) != 0;
    frame.ring_realtime_ns = uint64_t{hdr->tp_sec} * 1'000'000'000ull + hdr->tp_nsec;
  }
  l.held = n;
  return n;
}

void AfPacketPort::rx_release(uint32_t lane) noexcept {
  if (xsk_ != nullptr) return xsk_->release_burst();
  RxLane& l = rx_[lane];
  Ring& ring = l.ring;
  for (; l.held != 0; --l.held) {
    auto* hdr = reinterpret_cast<tpacket2_hdr*>(ring.frame(ring.next));
    __atomic_store_n(&hdr->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    ring.next = (ring.next + 1) % ring.frames;
  }
}

PortIo::SocketStats AfPacketPort::rx_socket_stats(uint32_t lane) noexcept {
  if (xsk_ != nullptr) return xsk_->socket_stats();
  tpacket_stats stats{};
  socklen_t len = sizeof stats;
  // Reading the statistics resets them in the kernel, so each call returns the delta; tp_packets
  // counts the frames dropped too.
  if (getsockopt(rx_[lane].fd, SOL_PACKET, PACKET_STATISTICS, &stats, &len) != 0) return {};
  return {stats.tp_packets, stats.tp_drops};
}

std::optional<uint64_t> AfPacketPort::interface_rx_frames() const noexcept {
  const std::optional<uint64_t> now = read_link_rx_packets(ifindex_);
  if (!now) return std::nullopt;
  return *now - std::min(*now, if_rx_base_);
}

uint32_t AfPacketPort::xdp_tx_send(uint32_t count, uint64_t* hard_errors) noexcept {
  uint32_t unsent = 0;
  const uint32_t taken = xsk_->tx_send(tx_frames(), tx_lens(), count, hard_errors, &unsent);
  // The taken slots' chunks are the kernel's now: new ones in their place (rotated behind the
  // frames still staged by the kick), and into any slot left without one earlier.
  for (uint32_t i = 0; i < tx_batch(); ++i) {
    if (i < taken || (i >= count && tx_frame(i) == nullptr)) set_tx_frame(i, xsk_->tx_take());
  }
  set_tx_unflushed(unsent);
  return taken;
}

uint32_t AfPacketPort::tx_send(uint32_t count, uint64_t* hard_errors) noexcept {
  if (tx_fd_ < 0) return xdp_tx_send(count, hard_errors);
  // The slots' buffers rotate between kicks (datapath/port_io.h): point at them each time.
  for (uint32_t i = 0; i < count; ++i) {
    tx_iov_[i].iov_base = tx_frame(i);
    tx_iov_[i].iov_len = tx_len(i);
  }
  uint32_t done = 0;
  while (done < count) {
    const int n = sendmmsg(tx_fd_, &tx_msgs_[done], count - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<uint32_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;  // retry next kick
    // A hard error on the first frame: drop it so the rest can go.
    ++*hard_errors;
    ++done;
  }
  return done;
}

void AfPacketPort::tx_wait(int timeout_ms) noexcept {
  if (tx_fd_ < 0) return xsk_->tx_wait(timeout_ms);
  pollfd pfd{tx_fd_, POLLOUT, 0};
  poll(&pfd, 1, timeout_ms);
}

}  // namespace sharebuf::datapath

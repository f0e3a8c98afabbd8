// AfPacketPort: one switch port on an AF_PACKET socket pair.
//   RX: a TPACKET_V2 memory-mapped ring (V2 hands over frame by frame; V3's block-retire timeout
//       would add milliseconds at light load — DESIGN.md, pitfalls), PACKET_IGNORE_OUTGOING so
//       the switch does not receive its own transmissions, ring drops read from
//       PACKET_STATISTICS. With rx_lanes > 1 ([switch] rx_mode = "per-cpu"), one such socket per
//       lane, joined in that order into a PACKET_FANOUT_CPU group: the kernel puts a frame into
//       lane (CPU it was received on) mod lanes, so lane c holds what arrived on CPU c.
//   TX: a second socket that receives nothing, with PACKET_QDISC_BYPASS; the egress path gathers
//       cells into PortIo's staging slots and a kick sends them with one sendmmsg. (A TPACKET TX
//       ring was measured slower on veth: its zero-copy skbs are copied again by veth, an extra
//       page allocation and copy per frame; bench/forwarding_bench.sh.)
//   With rx_xdp ([switch] rx_io = "af_xdp") the RX side is AF_XDP sockets instead
//   (datapath/xsk_port.h); with tx_xdp (tx_io = "af_xdp") TX too: the staging slots are the AF_XDP
//   socket's transmit chunks and a kick puts them on its TX ring.
// Thread-safety: as PortIo's (datapath/port_io.h).
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "buffer/delay_histogram.h"
#include "datapath/clocks.h"
#include "datapath/port_io.h"
#include "datapath/rx_frame.h"
#include "datapath/xsk_port.h"

namespace sharebuf::datapath {

class AfPacketPort final : public PortIo {
 public:
  // Throws std::runtime_error naming the interface and the failing call.
  // rx_frames: RX ring slots (per lane); tx_batch: staging slots, the most frames one sendmmsg
  // carries; rx_lanes: RX sockets in one fanout-by-CPU group (1: a plain RX socket); rx_xdp:
  // receive through AF_XDP sockets (one lane); xdp_busy_poll: those sockets prefer busy polling
  // (poll_mode "busy-poll", datapath/xsk_port.h); tx_xdp: transmit through the AF_XDP socket
  // (needs rx_xdp); shared_umem: the AF_XDP sockets' chunks are that area's (datapath/xsk_umem.h),
  // so queued frames may stay in them.
  AfPacketPort(const std::string& ifname, int ifindex, uint32_t mtu, uint32_t rx_frames,
               uint32_t tx_batch, uint32_t rx_lanes = 1, bool rx_xdp = false,
               bool xdp_busy_poll = false, bool tx_xdp = false, XskUmem* shared_umem = nullptr);
  // AF_XDP transmit chunks per port with tx_xdp: the staging slots, frames on the TX ring and
  // frames the kernel has not completed yet.
  static constexpr uint32_t kXdpTxFrames = 512;
  ~AfPacketPort() override;

  uint32_t rx_lanes() const noexcept override {
    return xsk_ ? 1 : static_cast<uint32_t>(rx_.size());
  }
  int rx_fd(uint32_t lane = 0) const noexcept override { return xsk_ ? xsk_->fd() : rx_[lane].fd; }
  uint32_t rx_burst(RxFrame* frames, uint32_t max, uint32_t lane = 0) noexcept override;
  void rx_release(uint32_t lane = 0) noexcept override;
  SocketStats rx_socket_stats(uint32_t lane = 0) noexcept override;
  std::optional<uint64_t> interface_rx_frames() const noexcept override;
  void rx_poke(uint32_t) noexcept override {
    if (xsk_ != nullptr) xsk_->poke();
  }
  void tx_wait(int timeout_ms) noexcept override;
  // "af_xdp" unless transmit fell back to sendmmsg (or was never asked for).
  const char* tx_io() const noexcept override { return tx_fd_ < 0 ? "af_xdp" : "af_packet"; }

 private:
  struct Ring {
    uint8_t* base = nullptr;
    size_t bytes = 0;
    uint32_t frame_size = 0;
    uint32_t frames = 0;
    uint32_t next = 0;
    uint8_t* frame(uint32_t i) const noexcept { return base + size_t{i} * frame_size; }
  };
  // One RX socket and its ring, on its own cache lines: lanes are read by different threads.
  struct alignas(64) RxLane {
    int fd = -1;
    Ring ring;
    uint32_t held = 0;  // slots of the burst rx_burst handed out, from ring.next on
  };
  static Ring setup_ring(int fd, int option, uint32_t frame_size, uint32_t frames,
                         const std::string& what);
  void open_rx_lane(RxLane& lane, int ifindex, uint32_t frame_size, uint32_t rx_frames);
  void join_fanout(uint32_t lanes);
  void close_all() noexcept;
  uint32_t tx_send(uint32_t count, uint64_t* hard_errors) noexcept override;
  uint32_t xdp_tx_send(uint32_t count, uint64_t* hard_errors) noexcept;

  int tx_fd_ = -1;
  int ifindex_ = 0;
  uint64_t if_rx_base_ = 0;  // the interface's rx_packets when the rings were ready
  std::vector<RxLane> rx_;
  std::unique_ptr<XskPort> xsk_;
  iovec tx_iov_[kMaxTxBatch] = {};
  mmsghdr tx_msgs_[kMaxTxBatch] = {};
};

}  // namespace sharebuf::datapath

// AfPacketPort: one switch port on an AF_PACKET socket pair.
//   RX: a TPACKET_V2 memory-mapped ring (V2 hands over frame by frame; V3's block-retire timeout
//       would add milliseconds at light load — DESIGN.md, pitfalls), PACKET_IGNORE_OUTGOING so
//       the switch does not receive its own transmissions, ring drops read from
//       PACKET_STATISTICS. With rx_lanes > 1 ([switch] rx_mode = "per-cpu"), one such socket per
//       lane, joined in that order into a PACKET_FANOUT_CPU group: the kernel puts a frame into
//       lane (CPU it was received on) mod lanes, so lane c holds what arrived on CPU c.
//   TX: a second socket that receives nothing, with PACKET_QDISC_BYPASS; the egress path gathers
//       cells into staging slots and sends a burst with one sendmmsg. (A TPACKET TX ring was
//       measured slower on veth: its zero-copy skbs are copied again by veth, an extra page
//       allocation and copy per frame; bench/forwarding_bench.sh.)
//   With rx_xdp ([switch] rx_io = "af_xdp") the RX side is AF_XDP sockets instead
//   (datapath/xsk_rx.h); TX is the same.
// Thread-safety: the RX half belongs to the port's RX worker, the TX half to its egress worker.
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
#include "datapath/rx_frame.h"
#include "datapath/xsk_rx.h"

namespace sharebuf::datapath {

class AfPacketPort {
 public:
  // Throws std::runtime_error naming the interface and the failing call.
  // rx_frames: RX ring slots (per lane); tx_batch: staging slots, the most frames one sendmmsg
  // carries; rx_lanes: RX sockets in one fanout-by-CPU group (1: a plain RX socket); rx_xdp:
  // receive through AF_XDP sockets (one lane).
  AfPacketPort(const std::string& ifname, int ifindex, uint32_t mtu, uint32_t rx_frames,
               uint32_t tx_batch, uint32_t rx_lanes = 1, bool rx_xdp = false);
  ~AfPacketPort();
  AfPacketPort(const AfPacketPort&) = delete;
  AfPacketPort& operator=(const AfPacketPort&) = delete;

  const std::string& name() const noexcept { return name_; }
  // The interface's MTU: fixed by the start for the ring slots, updated (set_mtu, by the daemon's
  // main thread) when it changes, for the egress limit RX workers check.
  uint32_t mtu() const noexcept { return mtu_.load(std::memory_order_relaxed); }
  void set_mtu(uint32_t mtu) noexcept { mtu_.store(mtu, std::memory_order_relaxed); }
  // The longest frame (Ethernet header on, no FCS) an RX ring slot holds whole; longer ones
  // arrive truncated. Sized from the MTU at the start: raising the MTU later does not grow it.
  uint32_t rx_capacity() const noexcept { return rx_capacity_; }
  // The longest frame a TX staging slot holds.
  uint32_t tx_capacity() const noexcept { return tx_slot_bytes_; }
  uint32_t rx_lanes() const noexcept { return xsk_ ? 1 : static_cast<uint32_t>(rx_.size()); }
  int rx_fd(uint32_t lane = 0) const noexcept { return xsk_ ? xsk_->fd() : rx_[lane].fd; }
  int tx_fd() const noexcept { return tx_fd_; }

  // RX, per lane (each lane has one reader at a time): the next frame the kernel handed over,
  // without releasing it; false if none is ready.
  bool rx_peek(RxFrame& frame, uint32_t lane = 0) noexcept;
  // Returns the lane's current RX slot to the kernel and moves on.
  void rx_release(uint32_t lane = 0) noexcept;
  // Frames the kernel dropped because the lane's RX ring was full, since the last call.
  uint64_t rx_ring_drops(uint32_t lane = 0) noexcept;

  // TX: a free staging slot (capacity in *room), or nullptr if every slot holds a frame.
  uint8_t* tx_slot(uint32_t* room) noexcept;
  // stamp_ns: when the RX worker took the frame (monotonic), for the rx_to_sent hop.
  void tx_commit(uint32_t len, uint64_t stamp_ns = 0) noexcept;
  // Sends the committed frames (sendmmsg). Frames the kernel cannot take now (socket buffer
  // full) stay staged for the next kick. Returns false if a frame was dropped on a hard error.
  // With `sent` given, each frame handed to the kernel records now - its stamp there.
  bool tx_kick(buffer::DelayHistogram* sent = nullptr) noexcept;
  // Waits up to timeout_ms for the socket to accept more.
  void tx_wait(int timeout_ms) noexcept;
  uint32_t tx_pending() const noexcept { return tx_count_; }
  uint64_t tx_dropped() const noexcept { return tx_dropped_; }

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
  };
  static Ring setup_ring(int fd, int option, uint32_t frame_size, uint32_t frames,
                         const std::string& what);
  void open_rx_lane(RxLane& lane, int ifindex, uint32_t frame_size, uint32_t rx_frames);
  void join_fanout(uint32_t lanes);
  void close_all() noexcept;

  std::string name_;
  std::atomic<uint32_t> mtu_;
  uint32_t rx_capacity_ = 0;
  int tx_fd_ = -1;
  static constexpr uint32_t kMaxTxBatch = 64;
  std::vector<RxLane> rx_;
  std::unique_ptr<XskRx> xsk_;
  uint32_t tx_slot_bytes_ = 0;
  uint32_t tx_batch_ = 0;
  uint32_t tx_count_ = 0;
  uint64_t tx_dropped_ = 0;
  std::unique_ptr<uint8_t[]> tx_staging_;
  iovec tx_iov_[kMaxTxBatch] = {};
  uint64_t tx_stamp_[kMaxTxBatch] = {};
  mmsghdr tx_msgs_[kMaxTxBatch] = {};
};

}  // namespace sharebuf::datapath

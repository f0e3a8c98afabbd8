// AfPacketPort: one switch port on an AF_PACKET socket pair.
//   RX: a TPACKET_V2 memory-mapped ring (V2 hands over frame by frame; V3's block-retire timeout
//       would add milliseconds at light load — DESIGN.md, pitfalls), PACKET_IGNORE_OUTGOING so
//       the switch does not receive its own transmissions, ring drops read from
//       PACKET_STATISTICS.
//   TX: a second socket that receives nothing, with a TPACKET_V2 TX ring and PACKET_QDISC_BYPASS;
//       the egress worker gathers cells straight into ring slots and kicks the kernel once per
//       batch.
// Thread-safety: the RX half belongs to the port's RX worker, the TX half to its egress worker.
#pragma once

#include <cstdint>
#include <string>

namespace sharebuf::datapath {

struct RxFrame {
  const uint8_t* data = nullptr;
  uint32_t len = 0;       // bytes captured
  uint32_t wire_len = 0;  // bytes on the wire (> len: the ring slot truncated it)
  uint16_t vlan_tci = 0;
  uint16_t vlan_tpid = 0;
  bool vlan_valid = false;        // the kernel stripped a VLAN tag into vlan_tci
  bool checksum_partial = false;  // TP_STATUS_CSUMNOTREADY: L4 checksum not computed yet
};

class AfPacketPort {
 public:
  // Throws std::runtime_error naming the interface and the failing call.
  AfPacketPort(const std::string& ifname, int ifindex, uint32_t mtu, uint32_t rx_frames,
               uint32_t tx_frames);
  ~AfPacketPort();
  AfPacketPort(const AfPacketPort&) = delete;
  AfPacketPort& operator=(const AfPacketPort&) = delete;

  const std::string& name() const noexcept { return name_; }
  uint32_t mtu() const noexcept { return mtu_; }
  int rx_fd() const noexcept { return rx_fd_; }
  int tx_fd() const noexcept { return tx_fd_; }

  // RX: the next frame the kernel handed over, without releasing it; false if none is ready.
  bool rx_peek(RxFrame& frame) noexcept;
  // Returns the current RX slot to the kernel and moves on.
  void rx_release() noexcept;
  // Frames the kernel dropped because the RX ring was full, since the last call.
  uint64_t rx_ring_drops() noexcept;

  // TX: a free slot's data area (capacity in *room), or nullptr if the ring is full.
  uint8_t* tx_slot(uint32_t* room) noexcept;
  void tx_commit(uint32_t len) noexcept;
  // Asks the kernel to send committed slots. Returns false on a hard error (errno set).
  bool tx_kick() noexcept;
  // Waits up to timeout_ms for a TX slot to free up.
  void tx_wait(int timeout_ms) noexcept;
  uint32_t tx_pending() const noexcept { return tx_pending_; }

 private:
  struct Ring {
    uint8_t* base = nullptr;
    size_t bytes = 0;
    uint32_t frame_size = 0;
    uint32_t frames = 0;
    uint32_t next = 0;
    uint8_t* frame(uint32_t i) const noexcept { return base + size_t{i} * frame_size; }
  };
  static Ring setup_ring(int fd, int option, uint32_t frame_size, uint32_t frames,
                         const std::string& what);
  void close_all() noexcept;

  std::string name_;
  uint32_t mtu_;
  int rx_fd_ = -1;
  int tx_fd_ = -1;
  Ring rx_;
  Ring tx_;
  uint32_t tx_pending_ = 0;
};

}  // namespace sharebuf::datapath

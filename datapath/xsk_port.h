// XskPort: a port's receive side on AF_XDP sockets instead of a TPACKET ring ([switch] rx_io =
// "af_xdp"), and with tx_io = "af_xdp" its transmit side too (below). The switch attaches
// its own XDP program to the port (driver mode), which redirects every frame into an AF_XDP socket
// of the frame's receive queue, in copy mode (veth and most drivers have no zero-copy path here).
// Why: the kernel's work per received frame happens in the sender's context (on veth, the sending
// host's system call runs the receive softirq), and a frame that goes to a TPACKET ring is first
// built into an skb that the kernel's receive path walks and frees, then copied into the ring; a
// redirected frame is copied into the socket's memory straight from the XDP program's buffer. The
// program the interface had before is put back when the port is let go.
//
// One socket per receive queue the interface uses (a socket takes only its own queue's frames);
// each has its own UMEM of `frames` buffers, all handed to the kernel's fill ring at the start and
// given back a burst at a time as the reader releases them. The sockets sit in one epoll set whose
// fd is what the RX worker polls. The reader takes, of the queues' first frames, the one the XDP
// program stamped first, so the port is served in the order frames reached it, as one ring
// serves it (a flow's frames are on one queue anyway: the sender picks the queue per flow).
//
// What the frame carries differs from a TPACKET slot: its stamp is the XDP program's (the
// monotonic clock as the frame reached the port, carried in the metadata in front of the frame,
// turned to CLOCK_REALTIME's scale), no VLAN tag stripped out of the data (a
// sender whose veth inserts the tag in hardware, txvlan on, hands XDP the frame without it) and
// no CHECKSUM_PARTIAL flag (the daemon's offload warning covers that).
//
// Transmit (tx_frames > 0): queue 0's socket also has a TX ring, and its UMEM `tx_frames` more
// chunks behind the receive buffers. A free chunk is what the egress path writes a frame into
// (PortIo's staging slot is the chunk itself, no copy in between); tx_send() puts the batch on
// the TX ring, kicks the kernel with sendto() while it asks for it (need_wakeup), until it has
// consumed the ring or stops making progress (copy mode sends at most 32 frames per call), and
// reaps the completion ring into the free list on every call. With a UMEM of the port's own a frame
// is copied from its cells into the chunk, as sendmmsg copies it into an skb; the kernel's
// copy-mode transmit then builds an skb from the chunk.
// With a shared UMEM (XskUmem, [switch] af_xdp_umem = "shared") the sockets' chunks are the
// shared area's: the fill rings and transmit chunks are taken from its store, a received frame
// the RX worker leaves in its chunk (RxFrame::kept) is replaced in the fill ring by the chunk the
// cell pool took for it (RxFrame::refill), and the transmit side sends any chunk of the area: a
// queued frame's own (CellPool::swap_chunk), no copy.
// Thread-safety: one reader at a time, as for the TPACKET ring; drops() may run beside it; the
// transmit side belongs to the port's TX owner (its rings are not the reader's).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "datapath/port_io.h"
#include "datapath/rx_frame.h"
#include "datapath/xsk_umem.h"

namespace sharebuf::datapath {

class XskPort {
 public:
  // Throws std::runtime_error naming the interface and the failing step (root is needed; a
  // kernel without CONFIG_XDP_SOCKETS, or an interface whose MTU the XDP program cannot take
  // without fragments, fails here).
  // frames: receive buffers per queue; mtu sizes them. busy_poll: the sockets prefer busy
  // polling (SO_PREFER_BUSY_POLL, SO_BUSY_POLL_BUDGET 64, SO_BUSY_POLL), so poke() runs the
  // device's NAPI poll in the caller's thread rather than waiting for its softirq; a kernel that
  // refuses the options leaves the sockets as they were, said once in the log.
  // tx_frames: transmit chunks (0: receive only). shared: the UMEM every port shares (nullptr:
  // one of the port's own per socket); its chunks must hold the MTU.
  XskPort(const std::string& ifname, int ifindex, uint32_t mtu, uint32_t frames,
          bool busy_poll = false, uint32_t tx_frames = 0, XskUmem* shared = nullptr);
  ~XskPort();
  // The receive buffers per queue a request for `frames` gets (a power of two, at least 64).
  static uint32_t rx_frames_for(uint32_t frames) noexcept;
  XskPort(const XskPort&) = delete;
  XskPort& operator=(const XskPort&) = delete;

  // The fd to poll for POLLIN (an epoll set of the sockets).
  int fd() const noexcept { return epoll_fd_; }
  // The longest frame a buffer holds.
  uint32_t capacity() const noexcept { return frame_size_ - kHeadroom; }

  // Up to `max` frames ready now, in the order the XDP program stamped them, without releasing
  // them; how many (0: none is ready on any queue).
  uint32_t peek_burst(RxFrame* frames, uint32_t max) noexcept;
  // Gives every frame peek_burst() returned back to the kernel (a kept one's refill chunk in its
  // place); the frames array peek_burst filled must still be there.
  void release_burst() noexcept;
  // The shared UMEM's store, or nullptr.
  const buffer::ChunkStore* chunks() const noexcept {
    return shared_ != nullptr ? &shared_->store() : nullptr;
  }
  // With busy polling on, a non-blocking recvfrom() per socket: the kernel polls the device's
  // receive queue once (budget 64) in this thread. Nothing otherwise.
  void poke() noexcept;
  // Transmit. A free chunk's memory (capacity() bytes), or nullptr while every chunk is in the
  // kernel's hands or staged.
  uint8_t* tx_take() noexcept { return tx_free_.empty() ? nullptr : tx_umem_ + pop_free(); }
  // Puts frames[0..count) (chunks tx_take gave, lengths lens) on the TX ring, as many as it has
  // room for, and has the kernel send what is on the ring; returns how many it put on. Frames
  // the device dropped (a full queue behind veth) add to *dropped. *unsent: frames on the ring
  // the kernel has not sent yet (the next call sends them).
  uint32_t tx_send(uint8_t* const* frames, const uint32_t* lens, uint32_t count, uint64_t* dropped,
                   uint32_t* unsent) noexcept;
  // Returns at once while a transmit chunk is free; otherwise waits up to timeout_ms for one to
  // come back (short sleeps: a device that makes no progress costs no spinning).
  void tx_wait(int timeout_ms) noexcept;
  bool transmits() const noexcept { return tx_frames_ != 0; }

  // Frames the kernel could not put into a socket (its ring full, or no free buffer), since the
  // last call.
  uint64_t drops() noexcept;
  // Since the last call: frames the sockets received (given back by release_burst, or dropped)
  // and of those the dropped ones (drops()).
  PortIo::SocketStats socket_stats() noexcept;

 private:
  // Where a copy-mode buffer's frame starts: the kernel leaves XDP_PACKET_HEADROOM in front.
  static constexpr uint32_t kHeadroom = 256;
  // A single-producer single-consumer ring shared with the kernel.
  struct Ring {
    uint32_t* producer = nullptr;
    uint32_t* consumer = nullptr;
    uint32_t* flags = nullptr;  // the TX ring's (XDP_RING_NEED_WAKEUP)
    void* desc = nullptr;
    uint32_t mask = 0;
    uint32_t cached_prod = 0;  // ours where we produce, the kernel's last seen where we consume
    uint32_t cached_cons = 0;
    void* map = nullptr;
    size_t map_bytes = 0;
  };
  struct Sock {
    int fd = -1;
    uint32_t queue = 0;
    uint8_t* umem = nullptr;
    size_t umem_bytes = 0;
    Ring fill, completion, rx, tx;
    uint32_t held = 0;      // RX entries from rx.cached_cons on that peek_burst handed out
    bool owns_umem = true;  // unmap umem when closed (not the shared one)
    uint64_t counted = 0;   // drops already reported
  };
  // false if the interface has no receive queue `queue` (and queue > 0).
  bool open_socket(Sock& s, int ifindex, uint32_t queue, uint32_t frames, uint32_t tx_frames);
  uint64_t pop_free() noexcept {
    const uint64_t addr = tx_free_.back();
    tx_free_.pop_back();
    return addr;
  }
  void reap_completions() noexcept;
  void kick_tx(uint64_t* dropped) noexcept;
  static void close_sock(Sock& s) noexcept;
  void load_program(int ifindex, uint32_t queues);
  void enable_busy_poll();
  void close_all() noexcept;

  // The first free chunk of the shared UMEM (kHeadroom in), or throws naming the port.
  uint64_t take_shared_chunk();

  std::string name_;
  int ifindex_ = 0;
  XskUmem* shared_ = nullptr;
  // The burst peek_burst handed out last: its frames and each one's socket (an index into
  // socks_), for release_burst to refill the right fill rings.
  RxFrame* burst_ = nullptr;
  uint32_t burst_n_ = 0;
  std::vector<uint32_t> burst_sock_;
  std::vector<Sock> socks_;
  // CLOCK_REALTIME - CLOCK_MONOTONIC, for the XDP stamps: set by drops() (the port's own worker)
  // while another worker holding the ring may be reading frames.
  std::atomic<uint64_t> realtime_offset_ns_{0};
  std::atomic<uint64_t> released_{0};  // frames release_burst gave back (the reader)
  uint64_t released_reported_ = 0;     // of those, reported by socket_stats()
  int map_fd_ = -1;
  int prog_fd_ = -1;
  int previous_prog_fd_ = -1;  // the interface's program before ours (-1: none)
  bool attached_ = false;
  bool busy_poll_ = false;
  int epoll_fd_ = -1;
  uint32_t frame_size_ = 2048;  // UMEM chunk: 2048, or 4096 for an MTU that needs it
  // Transmit, on socks_[0]: its UMEM, its free transmit chunks' offsets (each kHeadroom into its
  // chunk), how many transmit chunks it has.
  uint8_t* tx_umem_ = nullptr;
  std::vector<uint64_t> tx_free_;
  uint32_t tx_frames_ = 0;
};

}  // namespace sharebuf::datapath

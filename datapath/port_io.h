// PortIo: what the datapath needs of one switch port's I/O, burst by burst. The RX workers and
// the egress path see a port only through it, so the same workers run over AF_PACKET sockets
// (datapath/af_packet_port.h, the daemon) and over in-memory ports (datapath/memory_port.h: the
// datapath's unit tests, which need no root and no kernel).
//
// The cost of the indirection is one virtual call per burst, never one per frame: a burst of
// received frames is handed out by one rx_burst() and given back by one rx_release(); frames to
// send are gathered into staging slots (tx_slot/tx_commit: inline, no call into the
// implementation) and handed over by one tx_kick(), whose send is the implementation's. The
// slots' memory is this class's, or the implementation's own transmit buffers (AF_XDP).
//
// Thread-safety: the RX half of a lane belongs to one reader at a time (an RX worker), the TX
// half to the port's TX owner (datapath/egress_path.h); mtu() may be read anywhere.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "buffer/chunk_store.h"
#include "buffer/delay_histogram.h"
#include "datapath/rx_frame.h"

namespace sharebuf::datapath {

class PortIo {
 public:
  // The most frames one tx_kick() carries ([ports] tx_batch is at most this).
  static constexpr uint32_t kMaxTxBatch = 64;

  virtual ~PortIo() = default;
  PortIo(const PortIo&) = delete;
  PortIo& operator=(const PortIo&) = delete;

  const std::string& name() const noexcept { return name_; }
  // The interface's MTU: fixed by the start for the receive slots, updated (set_mtu, by the
  // daemon's main thread) when it changes, for the egress limit RX workers check.
  uint32_t mtu() const noexcept { return mtu_.load(std::memory_order_relaxed); }
  void set_mtu(uint32_t mtu) noexcept { mtu_.store(mtu, std::memory_order_relaxed); }
  // The longest frame (Ethernet header on, no FCS) a receive slot holds whole; longer ones
  // arrive truncated (RxFrame::len < wire_len).
  uint32_t rx_capacity() const noexcept { return rx_capacity_; }
  // The longest frame a TX staging slot holds.
  uint32_t tx_capacity() const noexcept { return tx_slot_bytes_; }

  // RX, per lane. The number of lanes (rx_mode per-cpu: one per CPU) and each lane's pollable fd:
  // readable while frames wait.
  virtual uint32_t rx_lanes() const noexcept = 0;
  virtual int rx_fd(uint32_t lane = 0) const noexcept = 0;
  // Up to `max` frames that are ready now, in the order they reached the port, into frames[0..);
  // returns how many (0: none). They stay valid, and writable in place, until rx_release(lane),
  // which gives every one of them back; a lane holds one burst at a time.
  virtual uint32_t rx_burst(RxFrame* frames, uint32_t max, uint32_t lane = 0) noexcept = 0;
  virtual void rx_release(uint32_t lane = 0) noexcept = 0;
  // The lane's socket by the kernel's own count, since the last call: every frame it was handed
  // (put in its ring or lost because the ring was full) and of those the ones lost.
  struct SocketStats {
    uint64_t frames = 0;
    uint64_t drops = 0;
  };
  virtual SocketStats rx_socket_stats(uint32_t lane = 0) noexcept = 0;
  // Frames the interface itself received since the port was opened (its rx_packets), before the
  // kernel hands them to any socket: with rx_socket_stats' frames, what the kernel dropped on the
  // way (e.g. a VLAN header cut short). nullopt without an interface (in-memory ports) or when it
  // cannot be read. Any thread; a netlink request per call.
  virtual std::optional<uint64_t> interface_rx_frames() const noexcept { return std::nullopt; }
  // Called by a busy-polling RX worker ([switch] poll_mode = "busy-poll") each time the lane's
  // ring was found empty: a port whose kernel can poll its device from this thread (AF_XDP
  // sockets with busy polling on) does so here. Nothing for the others.
  virtual void rx_poke(uint32_t lane = 0) noexcept { (void)lane; }

  // TX: a free staging slot (its capacity in *room), or nullptr if every slot holds a frame
  // (or the implementation has no buffer for the next one until a kick: AF_XDP's transmit
  // buffers come back from the kernel's completion ring).
  uint8_t* tx_slot(uint32_t* room) noexcept {
    if (tx_count_ == tx_batch_ || tx_ptr_[tx_count_] == nullptr) return nullptr;
    *room = tx_slot_bytes_;
    return tx_ptr_[tx_count_];
  }
  // Commits the frame written into the slot tx_slot() gave. stamp_ns: when the RX worker took
  // the frame (monotonic), for the rx_to_sent hop.
  void tx_commit(uint32_t len, uint64_t stamp_ns = 0) noexcept {
    tx_len_[tx_count_] = len;
    tx_stamp_[tx_count_++] = stamp_ns;
  }
  // Hands the committed frames to the wire. Frames it cannot take now (a full socket buffer)
  // stay staged, in order, for the next kick; so do frames the implementation holds but the
  // kernel has not sent yet (AF_XDP's TX ring), counted by tx_pending() until a kick sends them.
  // Returns false if a frame was dropped on a hard error. With `sent` given, each frame taken
  // records now - its stamp there.
  bool tx_kick(buffer::DelayHistogram* sent = nullptr) noexcept;
  // Waits up to timeout_ms for the wire to take more.
  virtual void tx_wait(int timeout_ms) noexcept = 0;
  // What the frames leave through, for the stats: "af_packet" (sendmmsg), "af_xdp" (an AF_XDP
  // TX ring), "memory" (an in-memory port).
  virtual const char* tx_io() const noexcept { return "memory"; }
  uint32_t tx_pending() const noexcept { return tx_count_ + tx_unflushed_; }
  // The shared memory (an AF_XDP shared UMEM) received frames lie in and may stay queued in
  // (RxFrame::kept), and the one the staging slots are chunks of, so a queued frame in it can be
  // sent from where it is (tx_send_from); nullptr when the port has none.
  const buffer::ChunkStore* rx_chunks() const noexcept { return rx_chunks_; }
  const buffer::ChunkStore* tx_chunks() const noexcept { return tx_chunks_; }
  // The frame about to be committed is at `frame`, a chunk of tx_chunks(), instead of in the slot
  // tx_slot() gave (whose chunk the caller now owns: CellPool::swap_chunk traded them).
  void tx_send_from(uint8_t* frame) noexcept { tx_ptr_[tx_count_] = frame; }
  uint64_t tx_dropped() const noexcept { return tx_dropped_; }

 protected:
  PortIo(std::string name, uint32_t mtu) : name_(std::move(name)), mtu_(mtu) {}
  void set_rx_capacity(uint32_t bytes) noexcept { rx_capacity_ = bytes; }
  void set_chunks(const buffer::ChunkStore* rx, const buffer::ChunkStore* tx) noexcept {
    rx_chunks_ = rx;
    tx_chunks_ = tx;
  }
  // tx_batch staging slots (clamped to 1..kMaxTxBatch) of tx_slot_bytes each.
  void init_tx(uint32_t tx_slot_bytes, uint32_t tx_batch);
  // The same slots without staging memory: the implementation gives each its buffer
  // (set_tx_frame), before the first tx_slot() or during a tx_send.
  void init_tx_buffers(uint32_t tx_slot_bytes, uint32_t tx_batch);

  // The implementation's send: takes staged frames 0..count-1 in order and returns how many it
  // took (0..count); a frame it dropped on a hard error counts as taken and adds to
  // *hard_errors. Called with count 0 too while tx_unflushed() or a slot has no buffer.
  virtual uint32_t tx_send(uint32_t count, uint64_t* hard_errors) noexcept = 0;
  // Slot i's buffer. By default the staging memory init_tx allocates; an implementation that
  // hands its slots' buffers to the kernel (AF_XDP) puts new ones in with set_tx_frame during
  // tx_send, nullptr where it has none yet. The kick keeps unsent frames in order at the front
  // by rotating these pointers, not by copying frames.
  uint8_t* tx_frame(uint32_t i) const noexcept { return tx_ptr_[i]; }
  void set_tx_frame(uint32_t i, uint8_t* buffer) noexcept { tx_ptr_[i] = buffer; }
  // Frames the implementation took but the kernel has not sent yet (a later kick sends them).
  void set_tx_unflushed(uint32_t frames) noexcept { tx_unflushed_ = frames; }
  uint32_t tx_unflushed() const noexcept { return tx_unflushed_; }
  uint32_t tx_len(uint32_t i) const noexcept { return tx_len_[i]; }
  uint8_t* const* tx_frames() const noexcept { return tx_ptr_; }
  const uint32_t* tx_lens() const noexcept { return tx_len_; }
  uint32_t tx_batch() const noexcept { return tx_batch_; }

 private:
  std::string name_;
  std::atomic<uint32_t> mtu_;
  uint32_t rx_capacity_ = 0;
  const buffer::ChunkStore* rx_chunks_ = nullptr;
  const buffer::ChunkStore* tx_chunks_ = nullptr;
  uint32_t tx_slot_bytes_ = 0;
  uint32_t tx_batch_ = 0;
  uint32_t tx_count_ = 0;
  uint32_t tx_unflushed_ = 0;
  uint64_t tx_dropped_ = 0;
  std::unique_ptr<uint8_t[]> tx_staging_;
  uint8_t* tx_ptr_[kMaxTxBatch] = {};
  uint32_t tx_len_[kMaxTxBatch] = {};
  uint64_t tx_stamp_[kMaxTxBatch] = {};
};

}  // namespace sharebuf::datapath

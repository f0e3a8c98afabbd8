// MemoryPort: a switch port whose wire is memory — the datapath's test double for AfPacketPort, as
// Open vSwitch tests its datapath over netdev-dummy. A test injects frames into its receive ring
// and reads what the switch sent; the RX and egress workers run over it unchanged
// (Switch(config, ports), datapath/switch.h), with no root, no namespace and no kernel.
//
// The ring behaves like a TPACKET ring where the workers can tell: rx_frames slots (an injection
// into a full ring is lost and counted as a ring drop), frames longer than rx_capacity() arrive
// truncated, a pollable fd readable while announced frames wait, the frames of a burst held until
// released. The wire takes frames while it has room (unlimited unless set_tx_room() limits it:
// a full socket buffer); a send may fail hard (fail_sends()). Each send is recorded with the
// thread that made it, each burst taken with the thread that took it, so a test sees which
// worker did what (inline sends, answers, parking).
//
// With use_chunks() the wire is an AF_XDP shared UMEM's (datapath/xsk_umem.h): each frame a burst
// hands out is first copied into a chunk of the store, as the kernel copies into a fill-ring chunk,
// and the chunk (or, for a frame kept queued in it, its refill) goes back to the store at release;
// the staging slots are chunks of the store too, so a frame queued in its chunk leaves from there.
//
// Thread-safety: every public member may be called from any thread; the PortIo halves keep
// PortIo's rules (one reader per lane, one TX owner).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "datapath/port_io.h"

namespace sharebuf::datapath {

class MemoryPort final : public PortIo {
 public:
  // How a frame arrives.
  struct Arrival {
    // The kernel stripped this VLAN tag into the ring header (RxFrame::vlan_valid).
    bool vlan_stripped = false;
    uint16_t vlan_tci = 0;
    bool checksum_partial = false;
    // false: the frame is in the ring but its reader is not told (the fd does not become
    // readable), as a frame whose reader's wake-up has not come yet: only a worker that reads the
    // ring for another reason finds it.
    bool announce = true;
  };
  struct Send {
    uint32_t frames = 0;  // frames this kick handed to the wire
    std::string thread;   // the name of the thread that kicked
  };
  static constexpr uint64_t kUnlimited = UINT64_MAX;

  explicit MemoryPort(std::string name, uint32_t mtu = 1500, uint32_t rx_frames = 1024,
                      uint32_t tx_batch = kMaxTxBatch);
  ~MemoryPort() override;

  // The wire side. inject: false if the ring was full (the frame is lost, counted as a ring
  // drop). inject_burst: the frames arrive together (one announcement); returns how many fit.
  bool inject(std::span<const uint8_t> frame, const Arrival& how);
  bool inject(std::span<const uint8_t> frame) { return inject(frame, Arrival{}); }
  size_t inject_burst(const std::vector<std::vector<uint8_t>>& frames);
  // Frames waiting in the ring (held ones included).
  size_t rx_waiting() const;
  // Everything sent so far, in order; how many; waits until at least `count` were sent.
  std::vector<std::vector<uint8_t>> sent() const;
  size_t sent_count() const;
  bool wait_sent(size_t count, std::chrono::milliseconds timeout) const;
  std::vector<Send> sends() const;
  // Frames kicks offered that the wire did not take (counted again at each refusal).
  uint64_t refused() const;
  // Frames taken from the ring, by the name of the thread that took them.
  std::map<std::string, uint64_t> taken_by() const;
  // The wire takes at most this many more frames (kUnlimited: any number); tx_wait() returns
  // when it has room again.
  void set_tx_room(uint64_t frames);
  // The next `frames` frames handed to the wire fail hard (dropped, counted by tx_kick).
  void fail_sends(uint64_t frames);
  // Called on the sending thread, outside the port's lock, for each frame the wire took: a host
  // behind the port that answers (by injecting into this or another port) in the same call, as
  // a receiving host's kernel answers within the sender's sendmmsg. Set before the switch starts.
  void set_on_sent(std::function<void(std::span<const uint8_t>)> fn) { on_sent_ = std::move(fn); }
  // Receive into and send from chunks of `store` (above). Before the switch starts; throws if the
  // store has too few free chunks for the staging slots.
  void use_chunks(buffer::ChunkStore& store);

  uint32_t rx_lanes() const noexcept override { return 1; }
  int rx_fd(uint32_t lane = 0) const noexcept override;
  uint32_t rx_burst(RxFrame* frames, uint32_t max, uint32_t lane = 0) noexcept override;
  void rx_release(uint32_t lane = 0) noexcept override;
  SocketStats rx_socket_stats(uint32_t lane = 0) noexcept override;
  void tx_wait(int timeout_ms) noexcept override;
  // Counts the pokes of a busy-polling worker (it found the ring empty and did not block).
  void rx_poke(uint32_t) noexcept override { pokes_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t pokes() const noexcept { return pokes_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::vector<uint8_t> data;  // as captured (at most rx_capacity() bytes)
    uint32_t wire_len = 0;
    Arrival how;
    uint64_t stamp_ns = 0;  // CLOCK_REALTIME at injection, like a ring stamp
  };
  uint32_t tx_send(uint32_t count, uint64_t* hard_errors) noexcept override;
  bool push_locked(std::span<const uint8_t> frame, const Arrival& how);
  void announce_locked(bool readable);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  int event_fd_ = -1;
  bool readable_ = false;
  uint32_t rx_frames_;
  std::deque<Slot> ring_;  // held_ frames at the front, then waiting ones
  uint32_t held_ = 0;
  uint64_t ring_drops_ = 0;
  uint64_t ring_frames_ = 0;  // pushed into the ring or dropped, since the last rx_socket_stats
  std::map<std::string, uint64_t> taken_by_;
  std::vector<std::vector<uint8_t>> sent_;
  std::vector<Send> sends_;
  uint64_t tx_room_ = kUnlimited;
  uint64_t fail_ = 0;
  uint64_t refused_ = 0;
  std::function<void(std::span<const uint8_t>)> on_sent_;
  std::atomic<uint64_t> pokes_{0};
  // use_chunks: the store, the burst rx_burst handed out last and each frame's chunk offset.
  buffer::ChunkStore* store_ = nullptr;
  RxFrame* burst_ = nullptr;
  std::vector<uint64_t> burst_chunks_;
};

}  // namespace sharebuf::datapath

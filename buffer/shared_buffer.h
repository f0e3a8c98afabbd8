// SharedBuffer: the switch's one shared cell buffer — layout, cell pool, occupancy accounting,
// probe registers, the per-queue FIFOs and their counters — with the operations the datapath
// composes: enqueue (reserve + copy in + push), dequeue and release (pop + gather + free),
// push-out. It decides nothing: admission is the policy's job (policies/), and the order
// "policy verdict, then enqueue" is the datapath's (model/admission_step.h).
//
// Accounting follows the frame: cells are reserved in BufferState before they are copied and
// released when they return to the pool, so free + sum(queue occupancy) == B at every quiescent
// point and a frame being transmitted still counts against its queue until release().
//
// Thread-safety: enqueue/push_out from any RX worker, each with its own CellCache; dequeue and
// release from the queue's egress worker. View mode is an atomic the control thread may flip.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "buffer/buffer_layout.h"
#include "buffer/buffer_state.h"
#include "buffer/buffer_view.h"
#include "buffer/cell_pool.h"
#include "buffer/packet_queue.h"
#include "buffer/probe_registers.h"
#include "buffer/queue_stats.h"
#include "common/spin_lock.h"

namespace sharebuf::buffer {

struct BufferConfig {
  uint32_t capacity_cells = 21000;
  uint32_t cell_bytes = BufferLayout::kDefaultCellBytes;
  std::vector<PortSpec> ports = {PortSpec{}};
  ViewMode view_mode = ViewMode::kExact;
  uint64_t probe_interval_ns = 10'000;
  uint64_t probe_delay_ns = 0;
  ProbePath probe_path = ProbePath::kDirect;  // fixed for the buffer's life
  // What each probe takes from its port's rate (model/probe_charge.h); 0: nothing, as the
  // software's probes are snapshots.
  uint32_t probe_bytes = 0;
  uint32_t max_threads = 16;   // threads that may own a CellCache at once
  uint32_t cache_cells = 256;  // cells per thread cache
};

struct FrameMeta {
  uint64_t arrival_ns = 0;
  uint16_t in_port = 0;
  uint8_t class_id = 0;
  uint8_t flags = 0;
};

// Copies of frames a push-out evicted, for the caller to act on after the eviction (trimming
// pushed-out frames, model/admission_step.h). Filled while the push-out lock is held, so it
// only copies into the room the caller reserved (reserve()); a frame that does not fit is not
// recorded (`skipped`).
struct EvictedFrames {
  struct Frame {
    PacketDescriptor desc;                       // its queue, class, ingress port, flags, length
    size_t offset = 0;                           // its bytes: bytes[offset, offset + desc.bytes)
    DropReason reason = DropReason::kPushedOut;  // pushed_out or reclaimed
  };
  void reserve(size_t bytes_capacity, size_t frames_capacity) {
    bytes.reserve(bytes_capacity);
    frames.reserve(frames_capacity);
  }
  void clear() noexcept {
    bytes.clear();
    frames.clear();
    skipped = 0;
  }
  std::span<const std::byte> frame_bytes(const Frame& f) const noexcept {
    return std::span<const std::byte>(bytes).subspan(f.offset, f.desc.bytes);
  }
  std::vector<std::byte> bytes;
  std::vector<Frame> frames;
  uint32_t skipped = 0;
};

class SharedBuffer {
 public:
  explicit SharedBuffer(const BufferConfig& config);
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  const BufferLayout& layout() const noexcept { return layout_; }
  CellPool& pool() noexcept { return pool_; }
  const CellPool& pool() const noexcept { return pool_; }
  BufferState& state() noexcept { return state_; }
  const BufferState& state() const noexcept { return state_; }
  ProbeRegisters& probes() noexcept { return probes_; }
  uint32_t probe_bytes() const noexcept { return probe_bytes_; }
  const ProbeRegisters& probes() const noexcept { return probes_; }
  PacketQueue& queue(uint32_t q) noexcept { return queues_[q]; }
  const PacketQueue& queue(uint32_t q) const noexcept { return queues_[q]; }
  QueueStats& stats(uint32_t q) noexcept { return stats_[q]; }
  const QueueStats& stats(uint32_t q) const noexcept { return stats_[q]; }

  ViewMode view_mode() const noexcept { return view_mode_.load(std::memory_order_relaxed); }
  // The probe registers take snapshots while the view is `probe` or the active policy learns
  // from probes; switching either on snapshots the buffer at once, so the registers are never
  // stale from an earlier probe period.
  void set_view_mode(ViewMode mode, uint64_t now_ns) noexcept;
  void set_policy_uses_probes(bool uses, uint64_t now_ns) noexcept;
  // What admission reads at `now_ns` (ingress): live counters, or the probe registers visible
  // then. Egress-side hooks read exact_view().
  BufferView view(uint64_t now_ns) const noexcept {
    return BufferView::of(view_mode(), state_, probes_, now_ns);
  }
  BufferView exact_view() const noexcept { return BufferView::exact(state_); }
  // Call before changing the occupancy at `now_ns` (datapath and replay): takes the probe
  // snapshot of a boundary just passed.
  void advance_probes(uint64_t now_ns) noexcept { probes_.advance(state_, now_ns); }

  // Reserves the frame's cells for queue q, copies it in and appends it. Returns false if the
  // cells do not fit in B; nothing is changed then (the caller counts the pool_full drop).
  bool enqueue(CellCache& cache, uint32_t q, std::span<const std::byte> frame,
               const FrameMeta& meta) noexcept;

  // Like enqueue(), for a trimmed copy, with cells from q's port's header reserve instead of the
  // shared pool (BufferState::set_header_reserve); no policy is asked. False, changing nothing,
  // if the reserve lacks the cells.
  bool enqueue_header(CellCache& cache, uint32_t q, std::span<const std::byte> frame,
                      const FrameMeta& meta) noexcept;

  // Removes the oldest frame of queue q and returns its head cell (kNoCell if empty). The frame
  // keeps its cells and its accounting until release().
  uint32_t dequeue(uint32_t q) noexcept { return queues_[q].pop_head(); }
  // Frees a dequeued frame's cells, releases its accounting and counts it as dequeued.
  void release(CellCache& cache, uint32_t head) noexcept;
  // dequeue + read_frame + release. Returns the frame's length, or 0 if the queue was empty;
  // `desc` (optional) receives the frame's descriptor.
  size_t dequeue_copy(CellCache& cache, uint32_t q, std::span<std::byte> out,
                      PacketDescriptor* desc = nullptr) noexcept;

  // Evicts one frame of queue q (its tail, or its head) and counts it as a pushed_out drop of q.
  // Returns the cells freed, 0 if q was empty.
  // `evicted` (optional) receives a copy of the frame.
  uint32_t push_out(CellCache& cache, uint32_t q, bool from_head,
                    EvictedFrames* evicted = nullptr) noexcept;
  // Reclaim (Occamy, docs/policies/occamy.md): drops queue q's oldest frame and counts it as a
  // reclaimed drop of q. Returns the cells freed, 0 if q was empty (its egress took the last
  // frame). Safe beside the egress workers: the frame is taken off under the queue's lock, as a
  // dequeue would take it. `bytes` (if given) receives the frame's length.
  uint32_t reclaim_head(CellCache& cache, uint32_t q, EvictedFrames* evicted = nullptr,
                        uint32_t* bytes = nullptr) noexcept {
    const uint32_t head = queues_[q].pop_head();
    if (head == kNoCell) return 0;
    if (bytes) *bytes = pool_.descriptor(head).bytes;
    return evict(cache, q, head, evicted, DropReason::kReclaimed);
  }
  // push_out of q's tail (its newest frame) only if `take(descriptor)` accepts it, decided under
  // the queue's lock so the frame judged is the frame taken. 0 if not taken.
  template <typename Take>
  uint32_t push_out_newest_if(CellCache& cache, uint32_t q, Take take,
                              EvictedFrames* evicted = nullptr) noexcept {
    const uint32_t tail = queues_[q].pop_tail_if(take);
    return tail == kNoCell ? 0 : evict(cache, q, tail, evicted);
  }

  // Push-out (LQD, docs/policies/lqd.md): reserves `cells` cells for an arrival to queue q, taking
  // what is free and pushing out frames of other queues for the rest. The push-outs are planned
  // before any is made: `pick(q, lengths, has_frame)` names the next victim queue from the
  // planned lengths (or returns a value >= the number of queues to refuse), frames are taken
  // from each victim's tail (or head) as the plan walks it, until the arrival fits. A refused
  // plan pushes nothing out. A carried-out plan hands the victims' cells to q directly
  // (BufferState::transfer), so a racing arrival cannot take them. Plans are serialised by one
  // lock, taken only when the buffer is full.
  //
  // Returns whether the cells are reserved (then call enqueue_reserved()); pushed_out_cells
  // counts what was pushed out. In the live switch an egress worker may send a planned victim
  // between planning and eviction; the shortfall is then planned again on the lengths as they
  // are, and only when no queue is longer than q any more are the cells of frames the egress
  // workers hold awaited (up to kVictimWait, as they come back to the pool). Only if they do not
  // come back in time is the arrival refused, after a push-out or not (waited_out; counted in
  // q's stalled_pkts here, its drop is the caller's to count).
  static constexpr std::chrono::milliseconds kVictimWait{5};
  using VictimPicker = uint32_t (*)(uint32_t q, std::span<const uint32_t> lengths,
                                    std::span<const uint8_t> has_frame) noexcept;
  struct RoomMade {
    bool reserved = false;
    uint32_t pushed_out_cells = 0;
    bool waited_out = false;  // refused after awaiting the egress workers' cells for kVictimWait
  };
  // `evicted` (optional) receives a copy of every frame pushed out.
  RoomMade make_room(CellCache& cache, uint32_t q, uint32_t cells, bool from_head,
                     VictimPicker pick, EvictedFrames* evicted = nullptr) noexcept;
  // Like enqueue(), for a frame whose cells make_room() already reserved in queue q.
  void enqueue_reserved(CellCache& cache, uint32_t q, std::span<const std::byte> frame,
                        const FrameMeta& meta) noexcept;

  void count_arrival(uint32_t q) noexcept {
    stats_[q].received_pkts.fetch_add(1, std::memory_order_relaxed);
  }
  void count_drop(uint32_t q, DropReason reason, uint32_t cells) noexcept {
    stats_[q].dropped_pkts[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
    stats_[q].dropped_cells[static_cast<size_t>(reason)].fetch_add(cells,
                                                                   std::memory_order_relaxed);
  }

  // Discards every queued frame (shutdown, tests). Each leaves its queue as a dequeue that
  // transmitted nothing (dequeued_pkts/cells count it, dequeued_bytes does not), which keeps the
  // accounting identities intact.
  void drain_all(CellCache& cache) noexcept;
  void reset_counters() noexcept;

 private:
  void link(uint32_t head, uint32_t q, uint32_t cells, const FrameMeta& meta,
            uint8_t flags) noexcept;
  // Gives a frame's cells back: to its port's header reserve if they came from there, else to
  // the pool.
  void give_back(const PacketDescriptor& d) noexcept;
  // make_room()'s steps, under push_out_lock_: plan victims for `need` more cells (false: q is
  // among the longest), then evict the planned frames, moving their cells to q; returns them.
  bool plan_victims(uint32_t q, uint32_t need, uint32_t held, bool from_head,
                    VictimPicker pick) noexcept;
  uint32_t evict_planned(CellCache& cache, uint32_t q, bool from_head,
                         EvictedFrames* evicted) noexcept;
  // Appends frame `head` to `evicted` if it has room.
  void record_evicted(uint32_t head, EvictedFrames* evicted, DropReason reason) const noexcept;

  BufferLayout layout_;
  CellPool pool_;
  BufferState state_;
  ProbeRegisters probes_;
  std::unique_ptr<PacketQueue[]> queues_;
  std::unique_ptr<QueueStats[]> stats_;
  std::atomic<ViewMode> view_mode_;
  uint32_t probe_bytes_;
  std::atomic<bool> policy_uses_probes_{false};

  // make_room()'s lock and its planning scratch (one entry per queue), guarded by it.
  // Counts and frees a frame already taken off queue q (push-outs).
  uint32_t evict(CellCache& cache, uint32_t q, uint32_t head, EvictedFrames* evicted,
                 DropReason reason = DropReason::kPushedOut) noexcept;
  common::SpinLock push_out_lock_;
  std::vector<uint32_t> plan_cells_;
  std::vector<uint8_t> plan_has_frame_;
  std::vector<uint32_t> plan_cursor_;
  std::vector<uint32_t> plan_victims_;
};

}  // namespace sharebuf::buffer

// SharedBuffer: the switch's one shared cell buffer — layout, cell pool, occupancy accounting,
// probe registers, the per-queue FIFOs and their counters — with the operations the datapath
// composes: enqueue (reserve + copy in + push), dequeue and release (pop + gather + free),
// push-out. It decides nothing: admission is the policy's job (policies/), and the order
// "policy verdict, then enqueue" is the datapath's (datapath/admission_step.h).
//
// Accounting follows the frame: cells are reserved in BufferState before they are copied and
// released when they return to the pool, so free + sum(queue occupancy) == B at every quiescent
// point and a frame being transmitted still counts against its queue until release().
//
// Thread-safety: enqueue/push_out from any RX worker, each with its own CellCache; dequeue and
// release from the queue's egress worker. View mode is an atomic the control thread may flip.
#pragma once

#include <atomic>
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

namespace sharebuf::buffer {

struct BufferConfig {
  uint32_t capacity_cells = 21000;
  uint32_t cell_bytes = BufferLayout::kDefaultCellBytes;
  std::vector<PortSpec> ports = {PortSpec{}};
  ViewMode view_mode = ViewMode::kExact;
  uint64_t probe_interval_ns = 10'000;
  uint32_t max_threads = 16;   // threads that may own a CellCache at once
  uint32_t cache_cells = 256;  // cells per thread cache
};

struct FrameMeta {
  uint64_t arrival_ns = 0;
  uint16_t in_port = 0;
  uint8_t class_id = 0;
  uint8_t flags = 0;
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
  const ProbeRegisters& probes() const noexcept { return probes_; }
  PacketQueue& queue(uint32_t q) noexcept { return queues_[q]; }
  const PacketQueue& queue(uint32_t q) const noexcept { return queues_[q]; }
  QueueStats& stats(uint32_t q) noexcept { return stats_[q]; }
  const QueueStats& stats(uint32_t q) const noexcept { return stats_[q]; }

  ViewMode view_mode() const noexcept { return view_mode_.load(std::memory_order_relaxed); }
  // Switching to probe mode publishes every port first, so the registers are never stale from
  // an earlier probe period.
  void set_view_mode(ViewMode mode, uint64_t now_ns) noexcept;
  BufferView view() const noexcept { return BufferView::of(view_mode(), state_, probes_); }
  BufferView exact_view() const noexcept { return BufferView::exact(state_); }

  // Reserves the frame's cells for queue q, copies it in and appends it. Returns false if the
  // cells do not fit in B; nothing is changed then (the caller counts the pool_full drop).
  bool enqueue(CellCache& cache, uint32_t q, std::span<const std::byte> frame,
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
  uint32_t push_out(CellCache& cache, uint32_t q, bool from_head) noexcept;

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
  BufferLayout layout_;
  CellPool pool_;
  BufferState state_;
  ProbeRegisters probes_;
  std::unique_ptr<PacketQueue[]> queues_;
  std::unique_ptr<QueueStats[]> stats_;
  std::atomic<ViewMode> view_mode_;
};

}  // namespace sharebuf::buffer

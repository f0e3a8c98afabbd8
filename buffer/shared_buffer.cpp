#include "buffer/shared_buffer.h"

namespace sharebuf::buffer {

SharedBuffer::SharedBuffer(const BufferConfig& config)
    : layout_(config.capacity_cells, config.cell_bytes, config.ports),
      pool_(CellPool::Options{.accounted_cells = config.capacity_cells,
                              .cell_bytes = config.cell_bytes,
                              .max_caches = config.max_threads,
                              .cache_cells = config.cache_cells}),
      state_(layout_),
      probes_(layout_, config.probe_interval_ns),
      queues_(std::make_unique<PacketQueue[]>(layout_.num_queues())),
      stats_(std::make_unique<QueueStats[]>(layout_.num_queues())),
      view_mode_(config.view_mode) {
  for (uint32_t q = 0; q < layout_.num_queues(); ++q)
    queues_[q].attach(&pool_);
}

void SharedBuffer::set_view_mode(ViewMode mode, uint64_t now_ns) noexcept {
  if (mode == ViewMode::kProbe) probes_.publish_all(state_, now_ns);
  view_mode_.store(mode, std::memory_order_relaxed);
}

bool SharedBuffer::enqueue(CellCache& cache, uint32_t q, std::span<const std::byte> frame,
                           const FrameMeta& meta) noexcept {
  const uint32_t cells = pool_.cells_for(static_cast<uint32_t>(frame.size()));
  if (!state_.try_reserve(q, cells)) return false;
  // Cannot fail for an accounted frame: the pool's physical size covers every cache.
  const uint32_t head = pool_.write_frame(cache, frame);
  if (head == kNoCell) {
    state_.release(q, cells);
    return false;
  }
  PacketDescriptor& d = pool_.descriptor(head);
  d.arrival_ns = meta.arrival_ns;
  d.queue = static_cast<uint16_t>(q);
  d.in_port = meta.in_port;
  d.class_id = meta.class_id;
  d.flags = meta.flags;
  stats_[q].enqueued_pkts.fetch_add(1, std::memory_order_relaxed);
  stats_[q].enqueued_cells.fetch_add(cells, std::memory_order_relaxed);
  queues_[q].push(head);
  return true;
}

void SharedBuffer::release(CellCache& cache, uint32_t head) noexcept {
  const PacketDescriptor& d = pool_.descriptor(head);
  const uint32_t q = d.queue;
  const uint32_t cells = d.cells;
  stats_[q].dequeued_pkts.fetch_add(1, std::memory_order_relaxed);
  stats_[q].dequeued_cells.fetch_add(cells, std::memory_order_relaxed);
  pool_.free_frame(cache, head);
  state_.release(q, cells);
}

size_t SharedBuffer::dequeue_copy(CellCache& cache, uint32_t q, std::span<std::byte> out,
                                  PacketDescriptor* desc) noexcept {
  const uint32_t head = dequeue(q);
  if (head == kNoCell) return 0;
  const size_t n = pool_.read_frame(head, out);
  if (desc != nullptr) *desc = pool_.descriptor(head);
  stats_[q].dequeued_bytes.fetch_add(n, std::memory_order_relaxed);
  release(cache, head);
  return n;
}

uint32_t SharedBuffer::push_out(CellCache& cache, uint32_t q, bool from_head) noexcept {
  const uint32_t head = from_head ? queues_[q].pop_head() : queues_[q].pop_tail();
  if (head == kNoCell) return 0;
  const uint32_t cells = pool_.descriptor(head).cells;
  count_drop(q, DropReason::kPushedOut, cells);
  pool_.free_frame(cache, head);
  state_.release(q, cells);
  return cells;
}

void SharedBuffer::drain_all(CellCache& cache) noexcept {
  for (uint32_t q = 0; q < layout_.num_queues(); ++q) {
    for (uint32_t head = dequeue(q); head != kNoCell; head = dequeue(q))
      release(cache, head);
  }
}

void SharedBuffer::reset_counters() noexcept {
  for (uint32_t q = 0; q < layout_.num_queues(); ++q)
    stats_[q].reset();
  state_.reset_peaks();
}

}  // namespace sharebuf::buffer

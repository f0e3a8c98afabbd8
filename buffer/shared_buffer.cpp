#include "buffer/shared_buffer.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

namespace sharebuf::buffer {

SharedBuffer::SharedBuffer(const BufferConfig& config)
    : layout_(config.capacity_cells, config.cell_bytes, config.ports),
      pool_(CellPool::Options{.accounted_cells = config.capacity_cells,
                              .cell_bytes = config.cell_bytes,
                              .max_caches = config.max_threads,
                              .cache_cells = config.cache_cells}),
      state_(layout_),
      probes_(layout_, config.probe_interval_ns, config.probe_delay_ns, config.probe_path,
              state_.fair_share_cells()),
      queues_(std::make_unique<PacketQueue[]>(layout_.num_queues())),
      stats_(std::make_unique<QueueStats[]>(layout_.num_queues())),
      view_mode_(config.view_mode),
      probe_bytes_(config.probe_bytes) {
  for (uint32_t q = 0; q < layout_.num_queues(); ++q)
    queues_[q].attach(&pool_);
  plan_cells_.resize(layout_.num_queues());
  plan_has_frame_.resize(layout_.num_queues());
  plan_cursor_.resize(layout_.num_queues());
  // A plan never takes more frames than the largest frame has cells.
  plan_victims_.reserve(layout_.max_frame_cells());
  probes_.set_enabled(config.view_mode == ViewMode::kProbe, state_, 0);
}

void SharedBuffer::set_view_mode(ViewMode mode, uint64_t now_ns) noexcept {
  probes_.set_enabled(
      mode == ViewMode::kProbe || policy_uses_probes_.load(std::memory_order_relaxed), state_,
      now_ns);
  view_mode_.store(mode, std::memory_order_relaxed);
}

void SharedBuffer::set_policy_uses_probes(bool uses, uint64_t now_ns) noexcept {
  policy_uses_probes_.store(uses, std::memory_order_relaxed);
  probes_.set_enabled(uses || view_mode() == ViewMode::kProbe, state_, now_ns);
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
  link(head, q, cells, meta, meta.flags & ~kFlagHeaderReserve);
  return true;
}

bool SharedBuffer::enqueue_header(CellCache& cache, uint32_t q, std::span<const std::byte> frame,
                                  const FrameMeta& meta) noexcept {
  const uint32_t cells = pool_.cells_for(static_cast<uint32_t>(frame.size()));
  if (!state_.take_header_cells(q, cells)) return false;
  const uint32_t head = pool_.write_frame(cache, frame);
  if (head == kNoCell) {
    state_.return_header_cells(q, cells);
    return false;
  }
  link(head, q, cells, meta, meta.flags | kFlagHeaderReserve);
  return true;
}

void SharedBuffer::enqueue_reserved(CellCache& cache, uint32_t q, std::span<const std::byte> frame,
                                    const FrameMeta& meta) noexcept {
  const uint32_t cells = pool_.cells_for(static_cast<uint32_t>(frame.size()));
  const uint32_t head = pool_.write_frame(cache, frame);
  if (head == kNoCell) {  // cannot happen for accounted cells; keep the books straight anyway
    state_.release(q, cells);
    return;
  }
  link(head, q, cells, meta, meta.flags & ~kFlagHeaderReserve);
}

void SharedBuffer::give_back(const PacketDescriptor& d) noexcept {
  if ((d.flags & kFlagHeaderReserve) != 0)
    state_.return_header_cells(d.queue, d.cells);
  else
    state_.release(d.queue, d.cells);
}

void SharedBuffer::link(uint32_t head, uint32_t q, uint32_t cells, const FrameMeta& meta,
                        uint8_t flags) noexcept {
  PacketDescriptor& d = pool_.descriptor(head);
  d.arrival_ns = meta.arrival_ns;
  d.queue = static_cast<uint16_t>(q);
  d.in_port = meta.in_port;
  d.class_id = meta.class_id;
  d.flags = flags;
  stats_[q].enqueued_pkts.fetch_add(1, std::memory_order_relaxed);
  stats_[q].enqueued_cells.fetch_add(cells, std::memory_order_relaxed);
  if (queues_[q].push(head)) probes_.on_arrival_to_empty(state_, q, meta.arrival_ns);
}

bool SharedBuffer::plan_victims(uint32_t q, uint32_t need, uint32_t held, bool from_head,
                                VictimPicker pick) noexcept {
  // Plan on the lengths as they are now; the arrival's queue as it was before the arrival.
  const uint32_t n = layout_.num_queues();
  for (uint32_t j = 0; j < n; ++j) {
    plan_cells_[j] = state_.queue_cells(j);
    plan_has_frame_[j] = queues_[j].length_packets_approx() != 0;
    plan_cursor_[j] = kNoCell;
  }
  plan_cells_[q] -= std::min(plan_cells_[q], held);
  plan_victims_.clear();
  while (need > 0) {
    const uint32_t j = pick(q, plan_cells_, plan_has_frame_);
    if (j >= n) return false;  // the arrival's queue is (one of) the longest: LQD drops it
    const uint32_t frame = plan_cursor_[j] == kNoCell
                               ? queues_[j].end(from_head)
                               : queues_[j].next_from_end(plan_cursor_[j], from_head);
    if (frame == kNoCell) {
      plan_has_frame_[j] = 0;
      continue;
    }
    plan_cursor_[j] = frame;
    // The queue lock taken by end()/next_from_end() makes the descriptor's fields visible.
    const uint32_t c = pool_.descriptor(frame).cells;
    plan_cells_[j] -= std::min(plan_cells_[j], c);
    need -= std::min(need, c);
    plan_victims_.push_back(j);
  }
  return true;
}

void SharedBuffer::record_evicted(uint32_t head, EvictedFrames* evicted,
                                  DropReason reason) const noexcept {
  if (evicted == nullptr) return;
  const PacketDescriptor& d = pool_.descriptor(head);
  if (evicted->frames.size() == evicted->frames.capacity() ||
      evicted->bytes.size() + d.bytes > evicted->bytes.capacity()) {
    ++evicted->skipped;  // no room reserved: growing here would allocate under the lock
    return;
  }
  const size_t offset = evicted->bytes.size();
  evicted->bytes.resize(offset + d.bytes);
  pool_.read_frame(head, std::span<std::byte>(evicted->bytes).subspan(offset, d.bytes));
  evicted->frames.push_back({d, offset, reason});
}

uint32_t SharedBuffer::evict_planned(CellCache& cache, uint32_t q, bool from_head,
                                     EvictedFrames* evicted) noexcept {
  uint32_t moved = 0;
  for (const uint32_t j : plan_victims_) {
    const uint32_t head = from_head ? queues_[j].pop_head() : queues_[j].pop_tail();
    if (head == kNoCell) continue;  // its egress sent the queue's last frames meanwhile
    record_evicted(head, evicted, DropReason::kPushedOut);
    const PacketDescriptor& d = pool_.descriptor(head);
    const uint32_t c = d.cells;
    count_drop(j, DropReason::kPushedOut, c);
    if ((d.flags & kFlagHeaderReserve) != 0) {
      // A header's cells go back to its port's reserve, not to q; the shortfall is planned again.
      state_.return_header_cells(j, c);
      pool_.free_frame(cache, head);
      continue;
    }
    state_.transfer(j, q, c);  // the victim's cells go to q: a racing arrival cannot take them
    pool_.free_frame(cache, head);
    moved += c;
  }
  return moved;
}

SharedBuffer::RoomMade SharedBuffer::make_room(CellCache& cache, uint32_t q, uint32_t cells,
                                               bool from_head, VictimPicker pick,
                                               EvictedFrames* evicted) noexcept {
  RoomMade out;
  std::lock_guard guard(push_out_lock_);
  uint32_t held = state_.reserve_up_to(q, cells);
  if (held == cells) {
    out.reserved = true;
    return out;
  }
  // The first plan is made on exact lengths and decides: refused, nothing is pushed out. In the
  // live switch an egress worker may send a planned victim between planning and eviction (the
  // eviction then takes a smaller frame, or none from a queue that emptied), so the shortfall is
  // planned again on the lengths as they are then, from the queues still longer than q. Only
  // when none is do we wait for the cells of the frames the egress workers hold, which come back
  // to the pool as they release them, for at most kVictimWait.
  std::chrono::steady_clock::time_point deadline{};
  for (uint32_t round = 0;; ++round) {
    if (round == 1) {
      deadline = std::chrono::steady_clock::now() + kVictimWait;
    } else if (round > 1 && std::chrono::steady_clock::now() > deadline) {
      out.waited_out = true;
      break;
    }
    if (plan_victims(q, cells - held, held, from_head, pick)) {
      const uint32_t moved = evict_planned(cache, q, from_head, evicted);
      held += moved;
      out.pushed_out_cells += moved;
    } else if (round == 0) {
      state_.release(q, held);
      return out;
    } else if (round % 64 == 0) {
      std::this_thread::yield();
    } else {
      common::cpu_relax();
    }
    if (held < cells) held += state_.reserve_up_to(q, cells - held);
    if (held >= cells) break;
  }
  if (held > cells) {
    state_.release(q, held - cells);  // the last victim was larger than the rest of the need
    held = cells;
  }
  if (held < cells) {
    state_.release(q, held);
    if (out.waited_out) stats_[q].stalled_pkts.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  out.reserved = true;
  return out;
}

void SharedBuffer::release(CellCache& cache, uint32_t head) noexcept {
  const PacketDescriptor d = pool_.descriptor(head);
  stats_[d.queue].dequeued_pkts.fetch_add(1, std::memory_order_relaxed);
  stats_[d.queue].dequeued_cells.fetch_add(d.cells, std::memory_order_relaxed);
  pool_.free_frame(cache, head);
  give_back(d);
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

uint32_t SharedBuffer::push_out(CellCache& cache, uint32_t q, bool from_head,
                                EvictedFrames* evicted) noexcept {
  const uint32_t head = from_head ? queues_[q].pop_head() : queues_[q].pop_tail();
  return head == kNoCell ? 0 : evict(cache, q, head, evicted);
}

uint32_t SharedBuffer::evict(CellCache& cache, uint32_t q, uint32_t head, EvictedFrames* evicted,
                             DropReason reason) noexcept {
  record_evicted(head, evicted, reason);
  const PacketDescriptor d = pool_.descriptor(head);
  count_drop(q, reason, d.cells);
  pool_.free_frame(cache, head);
  give_back(d);
  return d.cells;
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

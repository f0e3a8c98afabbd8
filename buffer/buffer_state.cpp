#include "buffer/buffer_state.h"

#include <algorithm>

namespace sharebuf::buffer {
namespace {

void raise_peak(std::atomic<uint32_t>& peak, uint32_t value) noexcept {
  uint32_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

BufferState::BufferState(const BufferLayout& layout)
    : layout_(layout),
      capacity_(layout.capacity_cells()),
      fair_share_((layout.capacity_cells() + layout.num_queues() - 1) / layout.num_queues()),
      live_(layout),
      peak_queue_(std::make_unique<PaddedCounter[]>(layout.num_queues())),
      peak_port_(std::make_unique<PaddedCounter[]>(layout.num_ports())) {}

bool BufferState::try_reserve(uint32_t queue, uint32_t cells) noexcept {
  uint32_t total = live_.total.load(std::memory_order_relaxed);
  uint32_t next;
  do {
    // capacity_ - total cannot underflow: total never exceeds capacity_.
    if (cells > capacity_ - total) return false;
    next = total + cells;
  } while (!live_.total.compare_exchange_weak(total, next, std::memory_order_relaxed));
  raise_peak(peak_total_, next);
  add(queue, cells);
  return true;
}

uint32_t BufferState::reserve_up_to(uint32_t queue, uint32_t cells) noexcept {
  uint32_t total = live_.total.load(std::memory_order_relaxed);
  uint32_t take;
  do {
    take = std::min(cells, capacity_ - total);
    if (take == 0) return 0;
  } while (!live_.total.compare_exchange_weak(total, total + take, std::memory_order_relaxed));
  raise_peak(peak_total_, total + take);
  add(queue, take);
  return take;
}

bool BufferState::try_reserve_outside(uint32_t cells) noexcept {
  uint32_t total = live_.total.load(std::memory_order_relaxed);
  do {
    if (cells > capacity_ - total) return false;
  } while (!live_.total.compare_exchange_weak(total, total + cells, std::memory_order_relaxed));
  raise_peak(peak_total_, total + cells);
  outside_.fetch_add(cells, std::memory_order_relaxed);
  return true;
}

void BufferState::release_outside(uint32_t cells) noexcept {
  outside_.fetch_sub(cells, std::memory_order_relaxed);
  live_.total.fetch_sub(cells, std::memory_order_relaxed);
}

bool BufferState::set_header_reserve(uint32_t cells_per_port) noexcept {
  if (cells_per_port == 0 || header_reserve_ != 0) return cells_per_port == header_reserve_;
  const uint64_t all = uint64_t{cells_per_port} * layout_.num_ports();
  if (all > capacity_ || !try_reserve_outside(static_cast<uint32_t>(all))) return false;
  header_free_ = std::make_unique<PaddedCounter[]>(layout_.num_ports());
  for (uint32_t p = 0; p < layout_.num_ports(); ++p)
    header_free_[p].v.store(cells_per_port, std::memory_order_relaxed);
  header_reserve_ = cells_per_port;
  return true;
}

bool BufferState::take_header_cells(uint32_t queue, uint32_t cells) noexcept {
  if (header_reserve_ == 0) return false;
  std::atomic<uint32_t>& free = header_free_[layout_.port_of(queue)].v;
  uint32_t have = free.load(std::memory_order_relaxed);
  do {
    if (cells > have) return false;
  } while (!free.compare_exchange_weak(have, have - cells, std::memory_order_relaxed));
  // The total does not move: the cells were counted outside the queues and now are in one.
  outside_.fetch_sub(cells, std::memory_order_relaxed);
  add(queue, cells);
  return true;
}

void BufferState::return_header_cells(uint32_t queue, uint32_t cells) noexcept {
  remove(queue, cells);
  outside_.fetch_add(cells, std::memory_order_relaxed);
  header_free_[layout_.port_of(queue)].v.fetch_add(cells, std::memory_order_relaxed);
}

void BufferState::release(uint32_t queue, uint32_t cells) noexcept {
  remove(queue, cells);
  live_.total.fetch_sub(cells, std::memory_order_relaxed);
}

void BufferState::transfer(uint32_t from, uint32_t to, uint32_t cells) noexcept {
  // The total does not move, so no other arrival can take these cells in between. Removed first,
  // so no port or group peak counts them twice.
  remove(from, cells);
  add(to, cells);
}

void BufferState::add(uint32_t queue, uint32_t cells) noexcept {
  const uint32_t port = layout_.port_of(queue);
  const uint32_t g = static_cast<uint32_t>(layout_.group_of(queue));
  const uint32_t q_before = live_.queue[queue].v.fetch_add(cells, std::memory_order_relaxed);
  const uint32_t p_before = live_.port[port].v.fetch_add(cells, std::memory_order_relaxed);
  const uint32_t g_before = live_.group[g].fetch_add(cells, std::memory_order_relaxed);
  if (q_before == 0) {
    live_.active_in_group[g].fetch_add(1, std::memory_order_relaxed);
    live_.active_on_port[port].fetch_add(1, std::memory_order_relaxed);
  }
  if (q_before < fair_share_ && q_before + cells >= fair_share_)
    live_.long_queues.fetch_add(1, std::memory_order_relaxed);
  raise_peak(peak_queue_[queue].v, q_before + cells);
  raise_peak(peak_port_[port].v, p_before + cells);
  raise_peak(peak_group_[g], g_before + cells);
}

void BufferState::remove(uint32_t queue, uint32_t cells) noexcept {
  const uint32_t port = layout_.port_of(queue);
  const uint32_t g = static_cast<uint32_t>(layout_.group_of(queue));
  const uint32_t q_before = live_.queue[queue].v.fetch_sub(cells, std::memory_order_relaxed);
  live_.port[port].v.fetch_sub(cells, std::memory_order_relaxed);
  live_.group[g].fetch_sub(cells, std::memory_order_relaxed);
  if (q_before == cells) {
    live_.active_in_group[g].fetch_sub(1, std::memory_order_relaxed);
    live_.active_on_port[port].fetch_sub(1, std::memory_order_relaxed);
  }
  if (q_before >= fair_share_ && q_before - cells < fair_share_)
    live_.long_queues.fetch_sub(1, std::memory_order_relaxed);
}

void BufferState::reset_peaks() noexcept {
  peak_total_.store(total_cells(), std::memory_order_relaxed);
  for (uint32_t g = 0; g < kNumPriorityGroups; ++g) {
    peak_group_[g].store(live_.group[g].load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  for (uint32_t q = 0; q < layout_.num_queues(); ++q) {
    peak_queue_[q].v.store(queue_cells(q), std::memory_order_relaxed);
  }
  for (uint32_t p = 0; p < layout_.num_ports(); ++p) {
    peak_port_[p].v.store(port_cells(p), std::memory_order_relaxed);
  }
}

}  // namespace sharebuf::buffer

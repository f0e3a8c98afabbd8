#include "buffer/cell_pool.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace sharebuf::buffer {
namespace {
// Longest chain write_frame builds: 9216-byte jumbo frames in 16-byte cells need 576.
constexpr uint32_t kMaxChainCells = 1024;
}  // namespace

CellPool::CellPool(const Options& options)
    : accounted_cells_(options.accounted_cells),
      cell_bytes_(options.cell_bytes),
      max_caches_(options.max_caches),
      cache_cells_(options.cache_cells) {
  if (accounted_cells_ == 0) throw std::invalid_argument("cell pool needs at least one cell");
  if (cell_bytes_ < 16) throw std::invalid_argument("cell_bytes must be at least 16");
  if (cache_cells_ < 2) throw std::invalid_argument("cache_cells must be at least 2");
  const uint64_t physical =
      uint64_t{accounted_cells_} + uint64_t{max_caches_} * uint64_t{cache_cells_};
  if (physical >= kNoCell) throw std::invalid_argument("cell pool too large for 32-bit indices");
  physical_cells_ = static_cast<uint32_t>(physical);

  data_ = std::make_unique<std::byte[]>(size_t{physical_cells_} * cell_bytes_);
  next_ = std::make_unique<uint32_t[]>(physical_cells_);
  descriptors_ = std::make_unique<PacketDescriptor[]>(physical_cells_);
  free_stack_ = std::make_unique<uint32_t[]>(physical_cells_);
  // Low indices on top of the stack: a lightly loaded switch keeps touching the same few cells.
  for (uint32_t i = 0; i < physical_cells_; ++i) {
    free_stack_[i] = physical_cells_ - 1 - i;
    next_[i] = kNoCell;
  }
  free_top_ = physical_cells_;
  global_free_.store(free_top_, std::memory_order_relaxed);
  caches_.assign(max_caches_, nullptr);
}

CellPool::~CellPool() = default;

uint32_t CellPool::take_bulk(uint32_t* out, uint32_t want) noexcept {
  std::lock_guard guard(lock_);
  const uint32_t n = std::min(want, free_top_);
  free_top_ -= n;
  std::memcpy(out, &free_stack_[free_top_], n * sizeof(uint32_t));
  global_free_.store(free_top_, std::memory_order_relaxed);
  return n;
}

void CellPool::give_bulk(const uint32_t* cells, uint32_t n) noexcept {
  std::lock_guard guard(lock_);
  std::memcpy(&free_stack_[free_top_], cells, n * sizeof(uint32_t));
  free_top_ += n;
  global_free_.store(free_top_, std::memory_order_relaxed);
}

uint32_t CellPool::register_cache(CellCache* cache) {
  std::lock_guard guard(caches_lock_);
  for (uint32_t i = 0; i < caches_.size(); ++i) {
    if (caches_[i] == nullptr) {
      caches_[i] = cache;
      return i;
    }
  }
  throw std::runtime_error("cell pool: all " + std::to_string(max_caches_) +
                           " per-thread caches are in use (raise CellPool::Options::max_caches)");
}

void CellPool::unregister_cache(uint32_t slot) noexcept {
  std::lock_guard guard(caches_lock_);
  caches_[slot] = nullptr;
}

uint32_t CellPool::free_cells_approx() const noexcept {
  uint32_t total = global_free_.load(std::memory_order_relaxed);
  std::lock_guard guard(caches_lock_);
  for (const CellCache* c : caches_) {
    if (c != nullptr) total += c->held_approx();
  }
  return total;
}

uint32_t CellPool::caches_in_use() const noexcept {
  std::lock_guard guard(caches_lock_);
  return static_cast<uint32_t>(std::count_if(caches_.begin(), caches_.end(),
                                             [](const CellCache* c) { return c != nullptr; }));
}

void CellPool::attach_chunks(ChunkStore* store) {
  chunks_ = store;
  ext_ = store != nullptr ? std::make_unique<uint32_t[]>(physical_cells_) : nullptr;
}

std::byte* CellPool::swap_chunk(uint32_t head, std::byte* slot) noexcept {
  if (!in_chunk(head) || !chunks_->holds(slot, descriptors_[head].bytes)) return nullptr;
  std::byte* frame = chunks_->data(ext_[head]);
  ext_[head] = chunks_->token(slot);
  return frame;
}

uint32_t CellPool::write_frame(CellCache& cache, std::span<const std::byte> frame) noexcept {
  if (frame.size() > size_t{kMaxChainCells} * cell_bytes_) return kNoCell;
  const uint32_t n = cells_for(static_cast<uint32_t>(frame.size()));
  uint32_t cells[kMaxChainCells];
  ChunkOffer* offer = cache.offer;
  if (offer != nullptr && ext_ != nullptr && !offer->taken && frame.data() >= offer->begin &&
      frame.data() + frame.size() <= offer->begin + offer->len &&
      chunks_->holds(frame.data(), frame.size())) {
    // The receive side gets a free chunk in its place; none free: copied as any other frame.
    uint64_t refill = 0;
    if (chunks_->take(&refill)) {
      if (!cache.alloc(cells, n)) {
        chunks_->give(refill);
        return kNoCell;
      }
      for (uint32_t i = 0; i < n; ++i)
        next_[cells[i]] = (i + 1 < n) ? cells[i + 1] : kNoCell;
      ext_[cells[0]] = chunks_->token(frame.data());
      offer->refill = refill;
      offer->taken = true;
      PacketDescriptor& d = descriptors_[cells[0]];
      d = PacketDescriptor{};
      d.bytes = static_cast<uint32_t>(frame.size());
      d.cells = static_cast<uint16_t>(n);
      return cells[0];
    }
  }
  if (!cache.alloc(cells, n)) return kNoCell;

  const std::byte* src = frame.data();
  size_t left = frame.size();
  for (uint32_t i = 0; i < n; ++i) {
    const size_t chunk = std::min<size_t>(left, cell_bytes_);
    std::memcpy(cell_data(cells[i]), src, chunk);
    src += chunk;
    left -= chunk;
    next_[cells[i]] = (i + 1 < n) ? cells[i + 1] : kNoCell;
  }
  PacketDescriptor& d = descriptors_[cells[0]];
  d = PacketDescriptor{};
  d.bytes = static_cast<uint32_t>(frame.size());
  d.cells = static_cast<uint16_t>(n);
  return cells[0];
}

size_t CellPool::read_frame(uint32_t head, std::span<std::byte> out) const noexcept {
  if (in_chunk(head)) {
    const size_t n = std::min<size_t>(descriptors_[head].bytes, out.size());
    std::memcpy(out.data(), chunks_->data(ext_[head]), n);
    return n;
  }
  size_t left = std::min<size_t>(descriptors_[head].bytes, out.size());
  const size_t total = left;
  std::byte* dst = out.data();
  for (uint32_t cell = head; cell != kNoCell && left > 0; cell = next_[cell]) {
    const size_t chunk = std::min<size_t>(left, cell_bytes_);
    std::memcpy(dst, cell_data(cell), chunk);
    dst += chunk;
    left -= chunk;
  }
  return total - left;
}

void CellPool::free_frame(CellCache& cache, uint32_t head) noexcept {
  if (in_chunk(head)) {
    chunks_->give(ext_[head] - 1);
    ext_[head] = 0;
  }
  uint32_t cell = head;
  for (uint32_t i = descriptors_[head].cells; i > 0 && cell != kNoCell; --i) {
    const uint32_t next = next_[cell];
    next_[cell] = kNoCell;
    cache.free(cell);
    cell = next;
  }
}

CellCache::CellCache(CellPool& pool)
    : pool_(pool),
      capacity_(pool.cache_cells_),
      cells_(std::make_unique<uint32_t[]>(pool.cache_cells_)) {
  // Registered last: from here another thread (the control thread's stats) reads held_, which
  // must be constructed by then.
  slot_ = pool.register_cache(this);
}

CellCache::~CellCache() {
  flush_all();
  pool_.unregister_cache(slot_);
}

bool CellCache::alloc(uint32_t* out, uint32_t n) noexcept {
  if (count_ < n) {
    // Refill in bulk: at least what is missing, at least half the cache, never past capacity.
    const uint32_t room = capacity_ - count_;
    const uint32_t want = std::min(room, std::max(n - count_, capacity_ / 2));
    count_ += pool_.take_bulk(&cells_[count_], want);
    if (count_ < n) {
      // Either the pool is short, or n is larger than a cache can hold: take the rest directly.
      const uint32_t direct = n - count_;
      const uint32_t got = pool_.take_bulk(out + count_, direct);
      if (got < direct) {
        pool_.give_bulk(out + count_, got);
        held_.store(count_, std::memory_order_relaxed);
        return false;
      }
      std::memcpy(out, &cells_[0], count_ * sizeof(uint32_t));
      count_ = 0;
      held_.store(0, std::memory_order_relaxed);
      return true;
    }
  }
  count_ -= n;
  std::memcpy(out, &cells_[count_], n * sizeof(uint32_t));
  held_.store(count_, std::memory_order_relaxed);
  return true;
}

void CellCache::free(uint32_t cell) noexcept {
  if (count_ == capacity_) {
    const uint32_t half = capacity_ / 2;
    count_ -= half;
    pool_.give_bulk(&cells_[count_], half);
  }
  cells_[count_++] = cell;
  held_.store(count_, std::memory_order_relaxed);
}

void CellCache::flush_all() noexcept {
  pool_.give_bulk(&cells_[0], count_);
  count_ = 0;
  held_.store(0, std::memory_order_relaxed);
}

}  // namespace sharebuf::buffer

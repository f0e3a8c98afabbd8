// CellPool: the physical storage of the shared buffer. Frames are stored as chains of fixed-size
// cells named by uint32_t index (VPP-style); storage is one array of cell data and one array of
// next-cell links, plus a descriptor table indexed by a frame's head cell.
//
// Free cells live in a global stack and in per-thread CellCaches that refill and flush in bulk
// (DPDK mempool-style), so the global lock is taken once per batch, not per frame.
//
// Capacity: the pool is built for `accounted_cells` (B, what BufferState lets policies admit) and
// physically holds B + max_caches * cache_cells, so that a frame admitted by accounting always gets
// its cells even when every cache is full. Used without BufferState the pool can run out: alloc
// then returns kNoCell and changes nothing.
//
// Frames may also stay outside the cells (attach_chunks): a received frame already in a chunk of
// the AF_XDP sockets' shared memory (buffer/chunk_store.h) is offered through the writer's
// CellCache (ChunkOffer); write_frame then allocates its cells without copying into them and
// notes the chunk at the head cell, read_frame reads the chunk, free_frame gives it back, and an
// egress port on the same memory takes the chunk itself (swap_chunk) instead of a copy.
//
// Thread-safety: the global stack is guarded by lock_. A CellCache belongs to one thread. Cell
// data and links of a frame are written by the thread that allocated it before the frame is
// published (queue push, release) and read after the matching acquire (queue pop, acquire).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "buffer/chunk_store.h"
#include "buffer/packet_descriptor.h"
#include "common/spin_lock.h"

namespace sharebuf::buffer {

class CellCache;

// A received frame a write may leave where it is (bytes [begin, begin + len), inside one chunk of
// the pool's ChunkStore). One write at most takes it: it then sets `taken` and puts in `refill`
// the free chunk it took to replace it on the receive side (the RX ring gets that one back
// instead). Only a frame whose bytes nothing changes afterwards may be offered: a flooded
// frame's copies take their CE marks in turn, so only a unicast frame is.
struct ChunkOffer {
  const std::byte* begin = nullptr;
  size_t len = 0;
  uint64_t refill = 0;
  bool taken = false;
};

class CellPool {
 public:
  struct Options {
    uint32_t accounted_cells = 0;
    uint32_t cell_bytes = 80;
    uint32_t max_caches = 16;    // threads that may hold a CellCache at once
    uint32_t cache_cells = 256;  // most cells one cache holds; it refills/flushes half of it
  };

  explicit CellPool(const Options& options);
  CellPool(const CellPool&) = delete;
  CellPool& operator=(const CellPool&) = delete;
  ~CellPool();

  uint32_t accounted_cells() const noexcept { return accounted_cells_; }
  uint32_t physical_cells() const noexcept { return physical_cells_; }
  uint32_t cell_bytes() const noexcept { return cell_bytes_; }
  uint32_t cells_for(uint32_t bytes) const noexcept {
    return bytes == 0 ? 1 : (bytes + cell_bytes_ - 1) / cell_bytes_;
  }

  // Copies `frame` into a fresh chain and returns its head cell, or kNoCell if the pool has too
  // few free cells (nothing is changed then). The descriptor at the head is reset with `bytes`
  // and `cells` filled in.
  uint32_t write_frame(CellCache& cache, std::span<const std::byte> frame) noexcept;

  // Gathers the frame at `head` into `out` (which must hold descriptor(head).bytes) and returns
  // the number of bytes written.
  size_t read_frame(uint32_t head, std::span<std::byte> out) const noexcept;

  // Returns the chain starting at `head` (descriptor(head).cells cells) to the cache, and its
  // chunk (if it has one) to the ChunkStore.
  void free_frame(CellCache& cache, uint32_t head) noexcept;

  // From now on frames offered in `store`'s chunks may stay there. Before any frame is written;
  // the store outlives the pool's frames.
  void attach_chunks(ChunkStore* store);
  ChunkStore* chunks() const noexcept { return chunks_; }
  // Whether the frame at `head` stays in a chunk.
  bool in_chunk(uint32_t head) const noexcept { return ext_ != nullptr && ext_[head] != 0; }
  // The frame at `head` stays in a chunk and `slot` is a free chunk of the same store with room
  // for it: the frame now names `slot`'s chunk (freed with it) and its own chunk's frame is
  // returned, to be sent from where it is. nullptr (nothing changed) otherwise.
  std::byte* swap_chunk(uint32_t head, std::byte* slot) noexcept;

  PacketDescriptor& descriptor(uint32_t head) noexcept { return descriptors_[head]; }
  const PacketDescriptor& descriptor(uint32_t head) const noexcept { return descriptors_[head]; }
  std::byte* cell_data(uint32_t cell) noexcept {
    return data_.get() + static_cast<size_t>(cell) * cell_bytes_;
  }
  const std::byte* cell_data(uint32_t cell) const noexcept {
    return data_.get() + static_cast<size_t>(cell) * cell_bytes_;
  }
  uint32_t next_cell(uint32_t cell) const noexcept { return next_[cell]; }

  // Free cells in the global stack plus every cache. Exact when no thread is allocating or
  // freeing; approximate otherwise.
  uint32_t free_cells_approx() const noexcept;
  uint32_t caches_in_use() const noexcept;

 private:
  friend class CellCache;

  // Bulk moves between the global stack and a cache. Return the number of cells moved.
  uint32_t take_bulk(uint32_t* out, uint32_t want) noexcept;
  void give_bulk(const uint32_t* cells, uint32_t n) noexcept;
  uint32_t register_cache(CellCache* cache);
  void unregister_cache(uint32_t slot) noexcept;

  uint32_t accounted_cells_;
  uint32_t cell_bytes_;
  uint32_t max_caches_;
  uint32_t cache_cells_;
  uint32_t physical_cells_;

  std::unique_ptr<std::byte[]> data_;
  std::unique_ptr<uint32_t[]> next_;
  std::unique_ptr<PacketDescriptor[]> descriptors_;
  ChunkStore* chunks_ = nullptr;
  std::unique_ptr<uint32_t[]> ext_;  // per head cell: its frame's chunk token, 0 in the cells

  common::SpinLock lock_;  // guards free_stack_ and free_top_
  std::unique_ptr<uint32_t[]> free_stack_;
  uint32_t free_top_ = 0;
  std::atomic<uint32_t> global_free_{0};  // mirror of free_top_ for readers outside lock_

  mutable common::SpinLock
      caches_lock_;  // guards caches_ (registration only, never on the data path)
  std::vector<CellCache*> caches_;
};

// A thread's private stock of free cells. Create one per thread that allocates or frees cells;
// it flushes everything back to the pool when destroyed. Not thread-safe by design.
class CellCache {
 public:
  explicit CellCache(CellPool& pool);
  CellCache(const CellCache&) = delete;
  CellCache& operator=(const CellCache&) = delete;
  ~CellCache();

  // Pops n cells into `out`; returns false (and takes nothing) if the pool has fewer than n free.
  bool alloc(uint32_t* out, uint32_t n) noexcept;
  void free(uint32_t cell) noexcept;
  uint32_t held_approx() const noexcept { return held_.load(std::memory_order_relaxed); }
  void flush_all() noexcept;

  // The frame this thread's next writes may leave in its chunk (nullptr: none).
  ChunkOffer* offer = nullptr;

 private:
  CellPool& pool_;
  uint32_t slot_ = 0;
  uint32_t capacity_;
  uint32_t count_ = 0;
  std::unique_ptr<uint32_t[]> cells_;
  // Written only by the owner thread; read by CellPool::free_cells_approx from any thread.
  std::atomic<uint32_t> held_{0};
};

}  // namespace sharebuf::buffer

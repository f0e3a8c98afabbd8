// ChunkStore: fixed-size chunks of one memory area that a queued frame may stay in instead of
// being copied into cells: the AF_XDP sockets' shared UMEM (datapath/xsk_umem.h). The cell pool
// still allocates the frame's cells (cells stay the policies' unit and the buffer's limit); the
// bytes are read from the chunk, and the chunk comes back here when the cells are freed.
// A frame in a chunk is named by a token: its byte offset in the area plus one (0: none), so a
// frame may start anywhere in its chunk (the kernel puts received frames behind its headroom).
//
// Thread-safety: take/give from any thread (RX workers take, whoever frees a frame gives: egress,
// push-out on another RX thread), under one spin lock held for a few stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/spin_lock.h"

namespace sharebuf::buffer {

class ChunkStore {
 public:
  // An area of `chunks` chunks of `chunk_bytes` (a power of two) at `base`, owned by the caller;
  // none is free until give().
  ChunkStore(std::byte* base, uint32_t chunk_bytes, uint32_t chunks);

  std::byte* base() const noexcept { return base_; }
  uint32_t chunk_bytes() const noexcept { return chunk_bytes_; }
  uint32_t chunks() const noexcept { return chunks_; }
  size_t bytes() const noexcept { return size_t{chunk_bytes_} * chunks_; }

  // Whether [p, p + len) lies inside one chunk of the area.
  bool holds(const std::byte* p, size_t len) const noexcept {
    if (p < base_ || p >= base_ + bytes()) return false;
    const size_t off = static_cast<size_t>(p - base_);
    return (off & (chunk_bytes_ - 1)) + len <= chunk_bytes_;
  }
  uint32_t token(const std::byte* p) const noexcept { return static_cast<uint32_t>(p - base_) + 1; }
  std::byte* data(uint32_t token) const noexcept { return base_ + (token - 1); }

  // A free chunk's offset into *offset; false when none is free.
  bool take(uint64_t* offset) noexcept;
  // The chunk holding `offset` (any byte of it) is free again.
  void give(uint64_t offset) noexcept;
  uint32_t free_approx() const noexcept;

 private:
  std::byte* base_;
  uint32_t chunk_bytes_;
  uint32_t chunks_;
  mutable common::SpinLock lock_;  // guards free_
  std::vector<uint64_t> free_;
};

}  // namespace sharebuf::buffer

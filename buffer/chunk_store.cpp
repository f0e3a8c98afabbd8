#include "buffer/chunk_store.h"

#include <mutex>
#include <stdexcept>

namespace sharebuf::buffer {

ChunkStore::ChunkStore(std::byte* base, uint32_t chunk_bytes, uint32_t chunks)
    : base_(base), chunk_bytes_(chunk_bytes), chunks_(chunks) {
  if (chunk_bytes == 0 || (chunk_bytes & (chunk_bytes - 1)) != 0)
    throw std::invalid_argument("chunk store: chunk_bytes must be a power of two");
  // Tokens are 32-bit offsets plus one.
  if (uint64_t{chunk_bytes} * chunks >= UINT32_MAX)
    throw std::invalid_argument("chunk store: the area must be under 4 GiB");
  free_.reserve(chunks);
}

bool ChunkStore::take(uint64_t* offset) noexcept {
  std::lock_guard guard(lock_);
  if (free_.empty()) return false;
  *offset = free_.back();
  free_.pop_back();
  return true;
}

void ChunkStore::give(uint64_t offset) noexcept {
  const uint64_t chunk = offset & ~uint64_t{chunk_bytes_ - 1};
  std::lock_guard guard(lock_);
  free_.push_back(chunk);  // never past `chunks`: reserved, and each chunk is given once
}

uint32_t ChunkStore::free_approx() const noexcept {
  std::lock_guard guard(lock_);
  return static_cast<uint32_t>(free_.size());
}

}  // namespace sharebuf::buffer

// Smartbuf's global Main_map (Smartbuf paper, Algorithm 1; docs/policies/smartbuf.md): burst
// signatures learned on every port, key = the smoothed queue gradient at a burst's peak, value =
// the largest occupancy (cells) that burst reached. Soft state: entries age out after `ttl_ns`, and
// the map is capped (the oldest entry goes first). An equal key keeps the larger value and is
// refreshed.
//
// A sorted flat array: the K-nearest-larger lookup is a binary search plus K steps, and nothing
// allocates after construction. Not thread-safe; SmartbufPolicy serialises access.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace sharebuf::policies {

class SmartbufMap {
 public:
  struct Entry {
    double gradient = 0;
    uint32_t max_cells = 0;
    uint64_t learned_ns = 0;
  };

  SmartbufMap(size_t capacity, uint64_t ttl_ns);

  void insert(double gradient, uint32_t max_cells, uint64_t now_ns);
  // The mean value of the (up to) k keys >= gradient closest to it; nullopt if there is none.
  std::optional<double> mean_of_nearest_larger(double gradient, size_t k) const;
  // Drops entries learned more than ttl before now (cheap when nothing is due).
  void expire(uint64_t now_ns);

  size_t size() const noexcept { return entries_.size(); }
  size_t capacity() const noexcept { return capacity_; }
  const std::vector<Entry>& entries() const noexcept { return entries_; }  // by gradient

 private:
  size_t capacity_;
  uint64_t ttl_ns_;
  uint64_t oldest_ns_ = UINT64_MAX;
  std::vector<Entry> entries_;
};

}  // namespace sharebuf::policies

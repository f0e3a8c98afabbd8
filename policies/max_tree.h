// MaxTree: values indexed 0..n-1 with the largest kept at the root of a tournament tree, so
// "which queue has the highest threshold" is O(1) and a change is O(log n). Credence changes a
// few thresholds per arrival but asks for the highest whenever LQD's virtual buffer is full; a
// scan of every queue there was the policy's whole cost.
//
// Values are unsigned integers below 2^52 (Credence keeps its thresholds in fixed point). Each
// node holds one 64-bit key, value << 12 | (4095 - index), so "higher value, and among equal
// values the lower index" is a plain integer max: a level of the walk up is one compare and one
// conditional move, and the winner is carried up in a register (only the sibling is loaded).
// Ties: among equal values the lower index wins; callers that need "the arrival's queue if it is
// among the highest" compare with max() themselves. Not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cache_line_vector.h"

namespace sharebuf::policies {

class MaxTree {
 public:
  static constexpr unsigned kIndexBits = 12;
  static constexpr uint32_t kMaxSize = 1u << kIndexBits;  // BufferLayout::kMaxQueues
  static constexpr uint64_t kMaxValue = (uint64_t{1} << (64 - kIndexBits)) - 1;

  // Values start at 0. Throws std::invalid_argument above kMaxSize values.
  explicit MaxTree(uint32_t n)
      : n_(n), leaves_(std::bit_ceil(n == 0 ? 1u : n)), nodes_(2 * leaves_) {
    if (n > kMaxSize) {
      throw std::invalid_argument("MaxTree holds at most " + std::to_string(kMaxSize) +
                                  " values, got " + std::to_string(n));
    }
    // Padding leaves (index >= n) hold 0 too and lose every tie to a real index below them.
    for (uint32_t i = 0; i < leaves_; ++i)
      nodes_[leaves_ + i] = key(0, i);
    for (uint32_t k = leaves_ - 1; k >= 1; --k)
      nodes_[k] = std::max(nodes_[2 * k], nodes_[2 * k + 1]);
  }

  uint32_t size() const noexcept { return n_; }
  uint64_t operator[](uint32_t i) const noexcept { return nodes_[leaves_ + i] >> kIndexBits; }

  // v must be at most kMaxValue. No early exit when a parent comes out unchanged: with
  // near-equal thresholds that is a coin flip, and a mispredicted exit costs more than walking
  // the few remaining levels.
  void set(uint32_t i, uint64_t v) noexcept {
    uint32_t k = leaves_ + i;
    uint64_t winner = key(v, i);
    nodes_[k] = winner;
    for (; k > 1; k /= 2) {
      winner = std::max(winner, nodes_[k ^ 1]);
      nodes_[k / 2] = winner;
    }
  }
  uint32_t argmax() const noexcept {
    return kMaxSize - 1 - static_cast<uint32_t>(nodes_[1] & (kMaxSize - 1));
  }
  uint64_t max() const noexcept { return nodes_[1] >> kIndexBits; }

 private:
  static uint64_t key(uint64_t value, uint32_t index) noexcept {
    return value << kIndexBits | (kMaxSize - 1 - index);
  }

  uint32_t n_;
  uint32_t leaves_;
  // nodes_[1] is the root; leaf i at nodes_[leaves_ + i]. On cache lines of its own: two
  // Credence pipelines on two threads each write their own tree.
  common::CacheLineVector<uint64_t> nodes_;
};

}  // namespace sharebuf::policies

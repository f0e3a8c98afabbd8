// MaxTree: values indexed 0..n-1 with the largest kept at the root of a tournament tree, so
// "which queue has the highest threshold" is O(1) and a change is O(log n). Credence changes a
// few thresholds per arrival but asks for the highest whenever LQD's virtual buffer is full; a
// scan of every queue there was the policy's whole cost.
//
// Each node holds its winner's value next to its index, so a walk up compares siblings without
// chasing indices, and stops as soon as a node comes out unchanged.
// Ties: among equal values the lower index wins; callers that need "the arrival's queue if it is
// among the highest" compare with max() themselves. Not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace sharebuf::policies {

class MaxTree {
 public:
  // Values start at 0.
  explicit MaxTree(uint32_t n)
      : n_(n), leaves_(std::bit_ceil(n == 0 ? 1u : n)), nodes_(2 * leaves_) {
    for (uint32_t i = 0; i < leaves_; ++i)
      nodes_[leaves_ + i] = Node{i < n_ ? 0.0 : kPadding, i};
    for (uint32_t k = leaves_ - 1; k >= 1; --k)
      nodes_[k] = pick(nodes_[2 * k], nodes_[2 * k + 1]);
  }

  uint32_t size() const noexcept { return n_; }
  double operator[](uint32_t i) const noexcept { return nodes_[leaves_ + i].value; }

  // The new winner of each level is carried up in registers: only the sibling is read from
  // memory, so the walk is not a chain of store-to-load round trips.
  void set(uint32_t i, double v) noexcept {
    uint32_t k = leaves_ + i;
    double value = v;
    uint32_t index = i;
    nodes_[k].value = v;
    for (; k > 1; k /= 2) {
      const Node& sibling = nodes_[k ^ 1];
      // Ties go to the lower index, which is the left child's: the same as pick().
      const bool sibling_wins =
          sibling.value > value || (sibling.value == value && sibling.index < index);
      value = sibling_wins ? sibling.value : value;
      index = sibling_wins ? sibling.index : index;
      // No early exit: with near-equal thresholds "parent unchanged" is a coin flip, and a
      // mispredicted exit costs more than walking the few remaining levels.
      nodes_[k / 2] = Node{value, index};
    }
  }
  uint32_t argmax() const noexcept { return nodes_[1].index; }
  double max() const noexcept { return nodes_[1].value; }

 private:
  struct Node {
    double value = 0;
    uint32_t index = 0;
  };
  static constexpr double kPadding = -1e300;  // below any threshold
  static Node pick(const Node& a, const Node& b) noexcept { return b.value > a.value ? b : a; }

  uint32_t n_;
  uint32_t leaves_;
  std::vector<Node> nodes_;  // nodes_[1] is the root; leaf i at nodes_[leaves_ + i]
};

}  // namespace sharebuf::policies

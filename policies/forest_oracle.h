// RandomForest: Credence's drop oracle, a random forest loaded from a JSON model and evaluated on
// flat arrays without allocation. The model is an array of trees; each tree is a flat array of
// nodes {"feature", "threshold", "left", "right", "value"}: an inner node sends x to `left` when
// x[feature] <= threshold (scikit-learn's convention), else to `right`; a leaf has feature -1 and
// `value`, the fraction of training samples labelled "dropped by LQD". The forest predicts a drop
// when the mean leaf value over its trees exceeds 0.5 (scikit-learn: ties go to class 0). Children
// must come after their parent, which makes every walk terminate; the loader checks this and every
// index. Features (all in cells): 0 queue length, 1 total occupancy, 2 and 3 their EWMAs over a
// base RTT.
//
// Layout: every tree is stored as a complete binary tree of the forest's depth D (at most
// kMaxDepth), node k's children at 2k+1 and 2k+2, so a walk is D steps of "load node, compare,
// k = 2k + 1 + (x > t)" with no child pointer to load, and its leaf's value lies where it ends;
// a leaf above depth D is padded with
// always-left nodes down to D. Comparisons are in float, as scikit-learn's are: it compares a
// float32 copy of the feature with a double threshold, and for a float x, x <= t exactly when
// x <= the largest float not above t, which is the threshold stored. Features are never NaN (they
// are cell counts and their averages).
//
// Two kernels give the same answers (tests run both):
//   walk   D dependent steps per tree (load a node, compare, pick a child); portable.
//   avx2   for D <= 6 on CPUs with AVX2: every node of a tree is compared at once (8 nodes per
//          instruction, each lane's feature picked by a permute), which gives one bit per node;
//          the path through the tree is then followed on those bits in registers. The walk's
//          chain of D dependent loads becomes D steps of a few cycles; four trees of depth 4
//          take half the walk's time (bench/policies/credence_forest_bench.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sharebuf::policies {

inline constexpr int kOracleFeatures = 4;

class RandomForest {
 public:
  enum class Kernel { kAuto, kWalk };  // kAuto: avx2 where it applies, else walk

  // Throws ConfigError naming the tree, the node and the problem.
  static RandomForest from_json(const nlohmann::json& model, const std::string& origin,
                                Kernel kernel = Kernel::kAuto);
  static RandomForest from_file(const std::string& path, Kernel kernel = Kernel::kAuto);

  // Mean leaf value over the trees (the predicted probability of a drop).
  double score(const double (&features)[kOracleFeatures]) const noexcept {
    return leaf_sum(features) / static_cast<double>(trees_);
  }
  // score > 0.5 without the division (a long-latency instruction on the admission path); the
  // same answer: 0.5 * trees is exact and rounding is monotonic.
  bool predicts_drop(const double (&features)[kOracleFeatures]) const noexcept {
    return leaf_sum(features) > 0.5 * static_cast<double>(trees_);
  }
  size_t trees() const noexcept { return trees_; }
  size_t nodes() const noexcept { return model_nodes_; }  // as in the model file
  int depth() const noexcept { return depth_; }
  const char* kernel() const noexcept { return lanes_.empty() ? "walk" : "avx2"; }
  static constexpr int kMaxDepth = 16;     // 2^16 leaves per tree; deeper models are refused
  static constexpr int kMaxLaneDepth = 6;  // the avx2 kernel's bits per tree fit 64 bits
  // Bounds on what a model file (a control request may name one) can make the daemon allocate:
  // the file's size, the trees, and the leaves of the complete trees (16 bytes a node: 32 MiB).
  static constexpr size_t kMaxModelBytes = 16 << 20;
  static constexpr size_t kMaxTrees = 1024;
  static constexpr size_t kMaxCompleteLeaves = size_t{1} << 20;

 private:
  // One threshold per feature: the tested feature's (the largest float <= the model's
  // threshold) and +inf for the others, so "x > t in any lane" is the comparison, done as one
  // vector compare with no load of x[feature] on the walk's dependency chain. Stored as ordered
  // integer keys (float_key): integer and float order agree, and an integer compare is faster.
  struct alignas(16) Inner {
    int32_t key[kOracleFeatures];
  };
  struct ModelNode {
    int32_t feature;  // -1: leaf
    int32_t child[2];
    double threshold;
    double value;
  };
  // The avx2 kernel's layout of a tree: for each group of 8 nodes, the feature each node tests
  // (a permute index), then for each group the nodes' threshold keys.
  struct alignas(32) Lanes {
    int32_t v[8];
  };
  // The kernel, chosen at load: one indirect call from predicts_drop to the loop that runs.
  using SumFn = double (*)(const RandomForest&, const double (&)[kOracleFeatures]) noexcept;
  double leaf_sum(const double (&features)[kOracleFeatures]) const noexcept {
    return sum_(*this, features);
  }
  friend struct ForestKernels;  // forest_oracle.cpp: the kernels
  void place(const std::vector<ModelNode>& tree, int32_t n, size_t tree_index, uint32_t k,
             int level);
  void choose_kernel(Kernel kernel);  // sets sum_ (and builds lanes_ for the avx2 kernel)
  void build_lanes();

  SumFn sum_ = nullptr;  // set by from_json
  size_t trees_ = 0;
  size_t model_nodes_ = 0;
  int depth_ = 0;                // D: every walk takes exactly D steps
  uint32_t inner_per_tree_ = 0;  // 2^D - 1
  size_t stride_ = 0;            // records per tree: 2^(D+1) - 1
  // Tree t's node k at t * stride_ + k: inner nodes (k < 2^D - 1), then the leaves, whose record
  // holds the leaf's value (a double) in its first 8 bytes. A walk ends on its leaf's record.
  std::vector<Inner> records_;
  // avx2 kernel only (empty otherwise): tree t's groups at lanes_[t * 2G], its leaf values at
  // leaves_[t * 2^D].
  std::vector<Lanes> lanes_;
  std::vector<double> leaves_;
};

}  // namespace sharebuf::policies

#include "policies/forest_oracle.h"

#include "common/bounded_input.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include <fstream>
#include <limits>
#include <sstream>

#include "policies/params.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define SHAREBUF_FOREST_AVX2 1
#endif

namespace sharebuf::policies {

namespace {

// A signed integer with the same order as the float (not NaN): non-negative floats compare like
// their bits; negative ones have their magnitude bits flipped. -0 maps to +0, as -0 == +0.
int32_t float_key(float f) noexcept {
  if (f == 0) f = 0;
  const auto bits = std::bit_cast<int32_t>(f);
  return bits ^ ((bits >> 31) & 0x7fffffff);
}

}  // namespace

RandomForest RandomForest::from_json(const nlohmann::json& model, const std::string& origin,
                                     Kernel kernel) {
  auto fail = [&](const std::string& where, const std::string& problem) -> void {
    throw ConfigError(origin + ": forest model: " + where + (where.empty() ? "" : ": ") + problem);
  };
  if (!model.is_array() || model.empty()) fail("", "must be a non-empty array of trees");
  RandomForest forest;
  std::vector<std::vector<ModelNode>> trees;
  for (size_t t = 0; t < model.size(); ++t) {
    const nlohmann::json& tree = model[t];
    const std::string tree_name = "tree " + std::to_string(t);
    if (!tree.is_array() || tree.empty()) fail(tree_name, "must be a non-empty array of nodes");
    std::vector<ModelNode>& nodes = trees.emplace_back();
    const auto size = static_cast<int64_t>(tree.size());
    for (int64_t n = 0; n < size; ++n) {
      const nlohmann::json& node = tree[static_cast<size_t>(n)];
      const std::string where = tree_name + " node " + std::to_string(n);
      if (!node.is_object()) fail(where, "must be an object");
      for (const char* key : {"feature", "threshold", "left", "right", "value"}) {
        if (!node.contains(key)) fail(where, std::string("missing key '") + key + "'");
        if (!node[key].is_number()) fail(where, std::string("key '") + key + "' must be a number");
      }
      for (const auto& [key, value] : node.items()) {
        if (key != "feature" && key != "threshold" && key != "left" && key != "right" &&
            key != "value") {
          fail(where, "unknown key '" + key + "'");
        }
      }
      ModelNode out{};
      const int64_t feature = node["feature"].get<int64_t>();
      out.threshold = node["threshold"].get<double>();
      out.value = node["value"].get<double>();
      if (feature == -1) {
        out.feature = -1;
        out.child[0] = out.child[1] = -1;
        if (!(out.value >= 0 && out.value <= 1)) fail(where, "leaf value must be within 0..1");
      } else {
        if (feature < 0 || feature >= kOracleFeatures) {
          fail(where, "feature must be -1 (leaf) or 0.." + std::to_string(kOracleFeatures - 1) +
                          ", got " + std::to_string(feature));
        }
        const int64_t left = node["left"].get<int64_t>();
        const int64_t right = node["right"].get<int64_t>();
        for (int64_t child : {left, right}) {
          if (child <= n || child >= size) {
            fail(where, "children must be nodes after this one in the same tree, got " +
                            std::to_string(child));
          }
        }
        out.feature = static_cast<int32_t>(feature);
        out.child[0] = static_cast<int32_t>(left);
        out.child[1] = static_cast<int32_t>(right);
      }
      nodes.push_back(out);
    }
    forest.model_nodes_ += nodes.size();
  }
  // Depth of the leaves reachable from each root (children come after parents: one forward pass).
  for (size_t t = 0; t < trees.size(); ++t) {
    const std::vector<ModelNode>& nodes = trees[t];
    std::vector<int> depth(nodes.size(), -1);
    depth[0] = 0;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (depth[n] < 0) continue;  // unreachable
      if (nodes[n].feature < 0) {
        forest.depth_ = std::max(forest.depth_, depth[n]);
        if (depth[n] > kMaxDepth) {
          fail("tree " + std::to_string(t), "deeper than " + std::to_string(kMaxDepth) +
                                                " levels (retrain with a smaller max depth)");
        }
        continue;
      }
      for (int32_t child : nodes[n].child)
        depth[static_cast<size_t>(child)] =
            std::max(depth[static_cast<size_t>(child)], depth[n] + 1);
    }
  }
  // The trees are stored complete at the forest's depth: bound what a small file may ask for.
  if (trees.size() > kMaxTrees)
    fail("", std::to_string(trees.size()) + " trees, more than " + std::to_string(kMaxTrees));
  if ((trees.size() << forest.depth_) > kMaxCompleteLeaves) {
    fail("", std::to_string(trees.size()) + " trees of depth " + std::to_string(forest.depth_) +
                 " would take more than " + std::to_string(kMaxCompleteLeaves) +
                 " leaves stored complete");
  }
  forest.trees_ = trees.size();
  forest.inner_per_tree_ = (1u << forest.depth_) - 1;
  forest.stride_ = 2 * size_t{forest.inner_per_tree_} + 1;
  forest.records_.assign(forest.trees_ * forest.stride_, Inner{});
  for (size_t t = 0; t < trees.size(); ++t)
    forest.place(trees[t], 0, t, 0, 0);
  forest.choose_kernel(kernel);
  return forest;
}

// The avx2 kernel's copy of the complete trees: per node the tested feature (the lane whose key
// is not +inf; a padding node tests feature 0 against +inf, so it always goes left) and its key.
void RandomForest::build_lanes() {
  const uint32_t groups = (inner_per_tree_ + 7) / 8;
  const int32_t never = float_key(std::numeric_limits<float>::infinity());
  lanes_.assign(trees_ * 2 * groups, Lanes{});
  leaves_.assign(trees_ << depth_, 0);
  for (size_t t = 0; t < trees_; ++t) {
    Lanes* features = &lanes_[t * 2 * groups];
    Lanes* keys = features + groups;
    for (uint32_t k = 0; k < 8 * groups; ++k) {
      int32_t feature = 0;
      int32_t key = never;
      if (k < inner_per_tree_) {
        const Inner& node = records_[t * stride_ + k];
        for (int f = 0; f < kOracleFeatures; ++f) {
          if (node.key[f] != never) {
            feature = f;
            key = node.key[f];
          }
        }
      }
      features[k / 8].v[k % 8] = feature;
      keys[k / 8].v[k % 8] = key;
    }
    for (uint32_t leaf = 0; leaf <= inner_per_tree_; ++leaf) {
      std::memcpy(&leaves_[(t << depth_) + leaf], &records_[t * stride_ + inner_per_tree_ + leaf],
                  sizeof(double));
    }
  }
}

// Puts model node n of a tree at position k of its complete tree; a leaf above depth D fills its
// whole subtree: always-left inner nodes, and its value in every leaf below.
void RandomForest::place(const std::vector<ModelNode>& tree, int32_t n, size_t tree_index,
                         uint32_t k, int level) {
  const ModelNode& node = tree[static_cast<size_t>(n)];
  if (level == depth_) {
    std::memcpy(&records_[tree_index * stride_ + k], &node.value, sizeof(double));
    return;
  }
  Inner& inner = records_[tree_index * stride_ + k];
  for (int32_t& key : inner.key)
    key = float_key(std::numeric_limits<float>::infinity());
  if (node.feature < 0) {  // padding below a shallow leaf: always left
    place(tree, n, tree_index, 2 * k + 1, level + 1);
    place(tree, n, tree_index, 2 * k + 2, level + 1);
    return;
  }
  float threshold = static_cast<float>(node.threshold);
  if (static_cast<double>(threshold) > node.threshold)
    threshold = std::nextafter(threshold, -std::numeric_limits<float>::infinity());
  inner.key[node.feature] = float_key(threshold);
  place(tree, node.child[0], tree_index, 2 * k + 1, level + 1);
  place(tree, node.child[1], tree_index, 2 * k + 2, level + 1);
}

RandomForest RandomForest::from_file(const std::string& path, Kernel kernel) {
  // A regular file of bounded size: a control request may name any path (a FIFO would block
  // the control thread, /dev/zero would grow it without end).
  std::string text;
  try {
    text = common::read_regular_file(path, kMaxModelBytes, "the forest model");
  } catch (const common::InputError& e) {
    throw ConfigError(e.what());
  }
  if (common::json_nesting_depth(text) > common::kMaxJsonDepth)
    throw ConfigError(path + ": the forest model is nested too deeply to be one");
  nlohmann::json model = nlohmann::json::parse(text, nullptr, false);
  if (model.is_discarded()) throw ConfigError(path + ": the forest model is not valid JSON");
  return from_json(model, path, kernel);
}

namespace {

#if SHAREBUF_FOREST_AVX2
using FeatureKeys = __m128i;
FeatureKeys to_keys(const double (&x)[kOracleFeatures]) noexcept {
  // Rounded to nearest, as numpy's astype(float32) does. Each double is converted from its own
  // 8-byte load: the caller has just stored them one by one, and a 16-byte load spanning two
  // stores is not forwarded from them (it waits for both to reach the cache, ~20 cycles). GCC
  // merges two adjacent 8-byte loads into one 16-byte load, but not two scalar conversions.
  const auto one = [&](int i) { return _mm_cvtsd_ss(_mm_setzero_ps(), _mm_load_sd(x + i)); };
  const __m128 f = _mm_movelh_ps(_mm_unpacklo_ps(one(0), one(1)), _mm_unpacklo_ps(one(2), one(3)));
  const __m128i bits = _mm_castps_si128(f);
  // float_key on every lane, without its -0 normalisation: a feature of -0 gets key -1, which
  // still compares with every (normalised) threshold as 0 would.
  return _mm_xor_si128(bits, _mm_and_si128(_mm_srai_epi32(bits, 31), _mm_set1_epi32(0x7fffffff)));
}
// 16 when some feature exceeds its threshold (at most one is finite), else 0: the walk goes
// right. Returned pre-scaled by the node size, so the walk can step in bytes.
uint32_t right_offset(FeatureKeys x, const int32_t* key) noexcept {
  const __m128i greater = _mm_cmpgt_epi32(x, _mm_load_si128(reinterpret_cast<const __m128i*>(key)));
  const auto mask = static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(greater)));  // 0..15
  return (mask + 15) & 16;  // no flags, no branch
}
#else
struct FeatureKeys {
  int32_t v[kOracleFeatures];
};
FeatureKeys to_keys(const double (&x)[kOracleFeatures]) noexcept {
  FeatureKeys f;
  for (int i = 0; i < kOracleFeatures; ++i)
    f.v[i] = float_key(static_cast<float>(x[i]));
  return f;
}
uint32_t right_offset(const FeatureKeys& x, const int32_t* key) noexcept {
  uint32_t right = 0;
  for (int i = 0; i < kOracleFeatures; ++i)
    right |= static_cast<uint32_t>(x.v[i] > key[i]);
  return right << 4;
}
#endif

#if SHAREBUF_FOREST_AVX2
// Node reached at depth 3 from the root, by the right-bits of nodes 0..6: one load instead of
// three dependent steps.
constexpr std::array<uint8_t, 128> kThirdLevel = [] {
  std::array<uint8_t, 128> table{};
  for (uint32_t bits = 0; bits < 128; ++bits) {
    uint32_t k = 0;
    for (int level = 0; level < 3; ++level)
      k = 2 * k + 1 + ((bits >> k) & 1);
    table[bits] = static_cast<uint8_t>(k);
  }
  return table;
}();

// The avx2 kernel for complete trees of depth D. Bit k of `right` says node k's feature exceeds
// its threshold; the path then costs a table load for the top three levels and a few register
// operations per level below. Trees are summed in order, as the walk does, so both kernels
// return the same double.
template <int D>
[[gnu::target("avx2"), gnu::always_inline]] inline double lane_tree_sum(const void* lanes_data,
                                                                        const double* leaves,
                                                                        size_t trees,
                                                                        FeatureKeys keys) noexcept {
  constexpr uint32_t kInner = (1u << D) - 1;
  constexpr int kGroups = (kInner + 7) / 8;
  constexpr int kTableLevels = D >= 3 ? 3 : 0;
  const auto* lanes = static_cast<const __m256i*>(lanes_data);
  const __m256i x = _mm256_zextsi128_si256(keys);  // the permutes read lanes 0..3 only
  double sum = 0;
  for (size_t t = 0; t < trees; ++t, lanes += 2 * kGroups, leaves += kInner + 1) {
    uint64_t right = 0;
#pragma GCC unroll 8
    for (int g = 0; g < kGroups; ++g) {
      const __m256i feature = _mm256_permutevar8x32_epi32(x, _mm256_load_si256(lanes + g));
      const __m256i greater = _mm256_cmpgt_epi32(feature, _mm256_load_si256(lanes + kGroups + g));
      right |= static_cast<uint64_t>(_mm256_movemask_ps(_mm256_castsi256_ps(greater))) << (8 * g);
    }
    uint32_t k = kTableLevels == 3 ? kThirdLevel[right & 127] : 0;
#pragma GCC unroll 8
    for (int level = kTableLevels; level < D; ++level)
      k = 2 * k + 1 + static_cast<uint32_t>((right >> k) & 1);
    sum += leaves[k - kInner];
  }
  return sum;
}
#endif

}  // namespace

struct ForestKernels {
#if SHAREBUF_FOREST_AVX2
  template <int D>
  [[gnu::target("avx2")]] static double lanes(const RandomForest& f,
                                              const double (&x)[kOracleFeatures]) noexcept {
    return lane_tree_sum<D>(f.lanes_.data(), f.leaves_.data(), f.trees_, to_keys(x));
  }
  // Indexed by depth - 1; choose_kernel() asks only for depths 1..kMaxLaneDepth.
  static_assert(RandomForest::kMaxLaneDepth == 6, "one lane kernel per depth");
  static constexpr std::array<RandomForest::SumFn, RandomForest::kMaxLaneDepth> kLanes = {
      &lanes<1>, &lanes<2>, &lanes<3>, &lanes<4>, &lanes<5>, &lanes<6>};
#endif
  static double walk(const RandomForest& f, const double (&x)[kOracleFeatures]) noexcept;
};

void RandomForest::choose_kernel(Kernel kernel) {
  sum_ = &ForestKernels::walk;
#if SHAREBUF_FOREST_AVX2
  if (kernel == Kernel::kAuto && depth_ >= 1 && depth_ <= kMaxLaneDepth &&
      __builtin_cpu_supports("avx2")) {
    build_lanes();
    sum_ = ForestKernels::kLanes[static_cast<size_t>(depth_ - 1)];
  }
#else
  (void)kernel;
#endif
}

double ForestKernels::walk(const RandomForest& f, const double (&x)[kOracleFeatures]) noexcept {
  static_assert(sizeof(RandomForest::Inner) == 16, "the walk steps in units of 16 bytes");
  const FeatureKeys features = to_keys(x);
  // Node k is at byte offset 16k of its tree; children 2k+1, 2k+2 at 2*(16k) + 16 (+ 16).
  const auto step = [&](const char* tree, uint32_t at) {
    return 2 * at + 16 + right_offset(features, reinterpret_cast<const int32_t*>(tree + at));
  };
  const auto leaf = [](const char* record) {
    double value;
    std::memcpy(&value, record, sizeof(value));
    return value;
  };
  const size_t tree_bytes = f.stride_ * sizeof(RandomForest::Inner);
  const auto* tree = reinterpret_cast<const char*>(f.records_.data());
  double sum = 0;
  size_t t = 0;
  // Four trees at a time: four independent chains overlap.
  for (; t + 4 <= f.trees_; t += 4, tree += 4 * tree_bytes) {
    uint32_t a = 0, b = 0, c = 0, d = 0;
    for (int level = 0; level < f.depth_; ++level) {
      a = step(tree, a);
      b = step(tree + tree_bytes, b);
      c = step(tree + 2 * tree_bytes, c);
      d = step(tree + 3 * tree_bytes, d);
    }
    // One at a time, in tree order: the avx2 kernel and scikit-learn add in that order too.
    sum += leaf(tree + a);
    sum += leaf(tree + tree_bytes + b);
    sum += leaf(tree + 2 * tree_bytes + c);
    sum += leaf(tree + 3 * tree_bytes + d);
  }
  for (; t < f.trees_; ++t, tree += tree_bytes) {
    uint32_t a = 0;
    for (int level = 0; level < f.depth_; ++level)
      a = step(tree, a);
    sum += leaf(tree + a);
  }
  return sum;
}

}  // namespace sharebuf::policies

#include "policies/forest_oracle.h"

#include <algorithm>
#include <cmath>

#include <immintrin.h>
#include <fstream>
#include <limits>
#include <sstream>

#include "policies/params.h"

namespace sharebuf::policies {

RandomForest RandomForest::from_json(const nlohmann::json& model, const std::string& origin) {
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
  forest.trees_ = trees.size();
  forest.inner_per_tree_ = (1u << forest.depth_) - 1;
  forest.inner_.assign(forest.trees_ * forest.inner_per_tree_, Inner{});
  forest.leaves_.assign(forest.trees_ * (size_t{1} << forest.depth_), 0.0);
  for (size_t t = 0; t < trees.size(); ++t)
    forest.place(trees[t], 0, t, 0, 0);
  return forest;
}

// Puts model node n of a tree at position k of its complete tree; a leaf above depth D fills its
// whole subtree: always-left inner nodes, and its value in every leaf below.
void RandomForest::place(const std::vector<ModelNode>& tree, int32_t n, size_t tree_index,
                         uint32_t k, int level) {
  const ModelNode& node = tree[static_cast<size_t>(n)];
  if (level == depth_) {
    leaves_[tree_index * (inner_per_tree_ + 1) + (k - inner_per_tree_)] = node.value;
    return;
  }
  Inner& inner = inner_[tree_index * inner_per_tree_ + k];
  if (node.feature < 0) {
    inner = Inner{};
    for (float& t : inner.threshold)
      t = std::numeric_limits<float>::infinity();
    place(tree, n, tree_index, 2 * k + 1, level + 1);
    place(tree, n, tree_index, 2 * k + 2, level + 1);
    return;
  }
  float threshold = static_cast<float>(node.threshold);
  if (static_cast<double>(threshold) > node.threshold)
    threshold = std::nextafter(threshold, -std::numeric_limits<float>::infinity());
  for (float& t : inner.threshold)
    t = std::numeric_limits<float>::infinity();
  inner.threshold[node.feature] = threshold;
  place(tree, node.child[0], tree_index, 2 * k + 1, level + 1);
  place(tree, node.child[1], tree_index, 2 * k + 2, level + 1);
}

RandomForest RandomForest::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the forest model");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json model = nlohmann::json::parse(text.str(), nullptr, false);
  if (model.is_discarded()) throw ConfigError(path + ": the forest model is not valid JSON");
  return from_json(model, path);
}

namespace {

#if defined(__SSE2__)
using FeatureVector = __m128;
FeatureVector to_float(const double (&x)[kOracleFeatures]) noexcept {
  // Rounded to nearest, as numpy's astype(float32) does.
  return _mm_movelh_ps(_mm_cvtpd_ps(_mm_loadu_pd(x)), _mm_cvtpd_ps(_mm_loadu_pd(x + 2)));
}
// 1 when some feature exceeds its threshold (at most one is finite): the walk goes right.
uint32_t goes_right(FeatureVector x, const float* threshold) noexcept {
  const int mask = _mm_movemask_ps(_mm_cmpgt_ps(x, _mm_load_ps(threshold)));  // 0..15
  return static_cast<uint32_t>(mask + 15) >> 4;                               // no flags, no branch
}
#else
struct FeatureVector {
  float v[kOracleFeatures];
};
FeatureVector to_float(const double (&x)[kOracleFeatures]) noexcept {
  FeatureVector f;
  for (int i = 0; i < kOracleFeatures; ++i)
    f.v[i] = static_cast<float>(x[i]);
  return f;
}
uint32_t goes_right(const FeatureVector& x, const float* threshold) noexcept {
  uint32_t right = 0;
  for (int i = 0; i < kOracleFeatures; ++i)
    right |= static_cast<uint32_t>(x.v[i] > threshold[i]);
  return right;
}
#endif

}  // namespace

double RandomForest::leaf_sum(const double (&x)[kOracleFeatures]) const noexcept {
  const FeatureVector features = to_float(x);
  const uint32_t per_tree = inner_per_tree_;
  const size_t leaves_per_tree = size_t{per_tree} + 1;
  const auto step = [&](const Inner* tree, uint32_t k) {
    return 2 * k + 1 + goes_right(features, tree[k].threshold);
  };
  double sum = 0;
  size_t t = 0;
  // Four trees at a time: four independent chains overlap.
  for (; t + 4 <= trees_; t += 4) {
    const Inner* base = inner_.data() + t * per_tree;
    uint32_t a = 0, b = 0, c = 0, d = 0;
    for (int level = 0; level < depth_; ++level) {
      a = step(base, a);
      b = step(base + per_tree, b);
      c = step(base + 2 * per_tree, c);
      d = step(base + 3 * per_tree, d);
    }
    const double* leaves = leaves_.data() + t * leaves_per_tree;  // leaf j is node per_tree + j
    sum += leaves[a - per_tree] + leaves[leaves_per_tree + b - per_tree] +
           leaves[2 * leaves_per_tree + c - per_tree] + leaves[3 * leaves_per_tree + d - per_tree];
  }
  for (; t < trees_; ++t) {
    const Inner* tree = inner_.data() + t * per_tree;
    uint32_t a = 0;
    for (int level = 0; level < depth_; ++level)
      a = step(tree, a);
    sum += leaves_[t * leaves_per_tree + (a - per_tree)];
  }
  return sum;
}

}  // namespace sharebuf::policies

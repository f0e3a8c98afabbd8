#include "policies/forest_oracle.h"

#include <algorithm>
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
  for (size_t t = 0; t < model.size(); ++t) {
    const nlohmann::json& tree = model[t];
    const std::string tree_name = "tree " + std::to_string(t);
    if (!tree.is_array() || tree.empty()) fail(tree_name, "must be a non-empty array of nodes");
    const auto base = static_cast<int32_t>(forest.nodes_.size());
    forest.roots_.push_back(base);
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
      Node out{};
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
        out.child[0] = base + static_cast<int32_t>(left);
        out.child[1] = base + static_cast<int32_t>(right);
      }
      forest.nodes_.push_back(out);
    }
  }
  forest.flatten_leaves();
  return forest;
}

// Every walk then takes exactly max_depth_ steps: a leaf becomes a node that sends every input to
// itself (feature 0 <= +inf). score() runs the trees side by side with no data-dependent branch
// (the child is picked by indexing with the comparison), so a random forest's unpredictable splits
// cost no mispredictions.
void RandomForest::flatten_leaves() {
  std::vector<int32_t> depth(nodes_.size(), 0);
  max_depth_ = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    if (n.feature >= 0) {
      depth[static_cast<size_t>(n.child[0])] = depth[i] + 1;
      depth[static_cast<size_t>(n.child[1])] = depth[i] + 1;
    } else {
      max_depth_ = std::max(max_depth_, depth[i]);
      n.feature = 0;
      n.threshold = std::numeric_limits<double>::infinity();
      n.child[0] = n.child[1] = static_cast<int32_t>(i);
    }
  }
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

double RandomForest::score(const double (&x)[kOracleFeatures]) const noexcept {
  // scikit-learn compares float32 copies of the features with its (double) thresholds; rounding
  // the same way makes the predictions identical to the trainer's, not just close.
  double features[kOracleFeatures];
  for (int i = 0; i < kOracleFeatures; ++i)
    features[i] = static_cast<double>(static_cast<float>(x[i]));
  const Node* nodes = nodes_.data();
  const auto step = [&](int32_t at) {
    const Node& n = nodes[at];
    return n.child[features[n.feature] > n.threshold];  // an index, not a branch
  };
  double sum = 0;
  size_t t = 0;
  // Four trees at a time in registers: four independent chains of loads overlap.
  for (; t + 4 <= roots_.size(); t += 4) {
    int32_t a = roots_[t], b = roots_[t + 1], c = roots_[t + 2], d = roots_[t + 3];
    for (int32_t level = 0; level < max_depth_; ++level) {
      a = step(a);
      b = step(b);
      c = step(c);
      d = step(d);
    }
    sum += nodes[a].value + nodes[b].value + nodes[c].value + nodes[d].value;
  }
  for (; t < roots_.size(); ++t) {
    int32_t a = roots_[t];
    for (int32_t level = 0; level < max_depth_; ++level)
      a = step(a);
    sum += nodes[a].value;
  }
  return sum / static_cast<double>(roots_.size());
}

}  // namespace sharebuf::policies

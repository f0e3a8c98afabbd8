// RandomForest: Credence's drop oracle, a random forest loaded from a JSON model and evaluated on
// flat arrays without allocation. The model is an array of trees; each tree is a flat array of
// nodes {"feature", "threshold", "left", "right", "value"}: an inner node sends x to `left` when
// x[feature] <= threshold (scikit-learn's convention), else to `right`; a leaf has feature -1 and
// `value`, the fraction of training samples labelled "dropped by LQD". The forest predicts a drop
// when the mean leaf value over its trees exceeds 0.5 (scikit-learn: ties go to class 0). Children
// must come after their parent, which makes every walk terminate; the loader checks this and every
// index. Features (all in cells): 0 queue length, 1 total occupancy, 2 and 3 their EWMAs over a
// base RTT.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sharebuf::policies {

inline constexpr int kOracleFeatures = 4;

class RandomForest {
 public:
  // Throws ConfigError naming the tree, the node and the problem.
  static RandomForest from_json(const nlohmann::json& model, const std::string& origin);
  static RandomForest from_file(const std::string& path);

  // Mean leaf value over the trees (the predicted probability of a drop).
  double score(const double (&features)[kOracleFeatures]) const noexcept;
  bool predicts_drop(const double (&features)[kOracleFeatures]) const noexcept {
    return score(features) > 0.5;
  }
  size_t trees() const noexcept { return roots_.size(); }
  size_t nodes() const noexcept { return nodes_.size(); }

 private:
  struct Node {
    int32_t feature;   // -1 in the model: a leaf (loaded as a self-loop, see flatten_leaves)
    int32_t child[2];  // left (x <= threshold), right
    double threshold;
    double value;
  };
  void flatten_leaves();

  std::vector<Node> nodes_;     // every tree's nodes, tree after tree
  std::vector<int32_t> roots_;  // index of each tree's root in nodes_
  int32_t max_depth_ = 0;       // longest root-to-leaf path of any tree
};

}  // namespace sharebuf::policies

#include "policies/forest_oracle.h"

#include <fstream>
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
        out.left = out.right = -1;
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
        out.left = base + static_cast<int32_t>(left);
        out.right = base + static_cast<int32_t>(right);
      }
      forest.nodes_.push_back(out);
    }
  }
  return forest;
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

double RandomForest::score(const double (&features)[kOracleFeatures]) const noexcept {
  double sum = 0;
  for (const int32_t root : roots_) {
    int32_t i = root;
    while (nodes_[static_cast<size_t>(i)].feature >= 0) {
      const Node& n = nodes_[static_cast<size_t>(i)];
      i = features[n.feature] <= n.threshold ? n.left : n.right;
    }
    sum += nodes_[static_cast<size_t>(i)].value;
  }
  return sum / static_cast<double>(roots_.size());
}

}  // namespace sharebuf::policies

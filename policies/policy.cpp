#include "policies/policy.h"

namespace sharebuf::policies {

std::string_view to_string(ProteanRole r) noexcept {
  switch (r) {
    case ProteanRole::kShort:
      return "short";
    case ProteanRole::kLong:
      return "long";
    case ProteanRole::kIncast:
      return "incast";
  }
  return "?";
}

nlohmann::json Policy::describe(const BufferView& view) const {
  nlohmann::json thresholds = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q) {
    thresholds.push_back(threshold_cells(q, env_.class_of_queue(q), view));
  }
  return {{"name", name()}, {"params", params()}, {"state", {{"thresholds_cells", thresholds}}}};
}

}  // namespace sharebuf::policies

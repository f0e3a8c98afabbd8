#include "policies/static.h"

#include <algorithm>
#include <cmath>

namespace sharebuf::policies {

StaticPolicy::StaticPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  const uint32_t queues = env.layout->num_queues();
  const uint32_t capacity = env.layout->capacity_cells();
  const auto caps = reader.number_or_list("cap_cells");
  if (!caps) {
    caps_.assign(queues, std::max(1u, capacity / queues));
    return;
  }
  for (double c : *caps) {
    if (c != std::floor(c)) reader.fail("cap_cells", "caps are whole cells");
    // The declared range cannot know the buffer; a cap above it could never bind.
    if (c > capacity) {
      reader.fail("cap_cells", "must be between 1 and " + std::to_string(capacity) +
                                   " (the buffer's cells), got " + std::to_string(uint64_t(c)));
    }
  }
  if (caps->size() == 1 && !params.values.at("cap_cells").is_array()) {
    caps_.assign(queues, static_cast<uint32_t>((*caps)[0]));
    return;
  }
  if (caps->size() != queues) {
    reader.fail("cap_cells", "lists " + std::to_string(caps->size()) + " caps for " +
                                 std::to_string(queues) + " queues");
  }
  per_queue_ = true;
  for (double c : *caps)
    caps_.push_back(static_cast<uint32_t>(c));
}

nlohmann::json StaticPolicy::params() const {
  if (per_queue_) return {{"cap_cells", caps_}};
  return {{"cap_cells", caps_.front()}};
}

}  // namespace sharebuf::policies

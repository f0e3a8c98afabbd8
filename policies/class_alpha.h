// Per-class alpha tables. Alphas are resolved once at construction into a 256-entry table
// indexed by class id, so admit() does one load and never range-checks.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

#include "policies/policy.h"

namespace sharebuf::policies {

using AlphaTable = std::array<double, 256>;

// Each class's own alpha, or `fallback` where the class sets none (and for unused ids).
inline AlphaTable resolve_alphas(const PolicyEnv& env, double fallback) {
  AlphaTable table;
  table.fill(fallback);
  for (size_t c = 0; c < env.classes.size() && c < table.size(); ++c) {
    if (env.classes[c].alpha) table[c] = *env.classes[c].alpha;
  }
  return table;
}

// FB's defaults are per priority group: each class's own alpha, else `high` for high-priority
// classes and `low` for the rest (and unused ids).
inline AlphaTable resolve_group_alphas(const PolicyEnv& env, double high, double low) {
  AlphaTable table = resolve_alphas(env, low);
  for (size_t c = 0; c < env.classes.size() && c < table.size(); ++c) {
    if (!env.classes[c].alpha && env.classes[c].group == PriorityGroup::kHigh) table[c] = high;
  }
  return table;
}

// DT's threshold alpha * Rem in whole cells, at most B: what telemetry shows for DT-like policies.
inline uint32_t dt_threshold_cells(double alpha, const BufferView& view) noexcept {
  return static_cast<uint32_t>(
      std::min<double>(std::ceil(alpha * view.remaining_cells()), view.capacity_cells()));
}

}  // namespace sharebuf::policies

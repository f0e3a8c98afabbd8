// The queue-length gradient Protean (Algorithm 2, step 2) and Smartbuf (Algorithm 1, line 9)
// compute on every dequeue, normalised by the port's line rate so that 1 means "the queue grows
// at line rate" and thresholds like Protean's buildup are independent of the port speed.
#pragma once

#include <cstdint>

namespace sharebuf::policies {

inline double normalised_gradient(uint32_t q, uint32_t q_prev, uint64_t dt_ns,
                                  double rate_cells_per_ns) noexcept {
  return (static_cast<double>(q) - q_prev) / static_cast<double>(dt_ns) / rate_cells_per_ns;
}

}  // namespace sharebuf::policies

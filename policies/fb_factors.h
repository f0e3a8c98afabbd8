// The two factors FB (FB paper, Eq. 3) adds to DT, shared by fb and abm:
//   N_p   congested (non-empty) queues of priority group p, counting the arriving queue; with
//         one queue per port every congested queue counts (the paper's single-queue mode).
//   share the arriving queue's scheduler share among its port's non-empty queues: round robin
//         1/n_active, DRR w_q / sum of active weights, strict priority 1 for the highest
//         non-empty queue and 1/n_active below a busy one (never 0 for the arrival).
#pragma once

#include <cstdint>

#include "policies/policy.h"

namespace sharebuf::policies {

double congested_queues(uint32_t queue, PriorityGroup group, const BufferView& view) noexcept;
double scheduler_share(uint32_t queue, const PolicyEnv& env, const BufferView& view) noexcept;

}  // namespace sharebuf::policies

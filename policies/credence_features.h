// The features Credence's oracle sees for an arrival (Credence paper, section 4;
// docs/policies/credence.md), all in cells: the arriving queue's length, the total occupancy, and
// their EWMAs over one base RTT. The EWMA weight of a new sample is min(1, time since that
// average's previous sample / base RTT): the total's average is sampled at every arrival, a queue's
// only at arrivals to that queue, so each forgets at the same pace whatever the packet rate (a
// queue that last saw an arrival a base RTT ago takes its new length at full weight, however busy
// the other queues are). Shared by CredencePolicy (inference) and the replay datapath's
// LQD-labelled traces (training), so both compute them identically.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "policies/forest_oracle.h"

namespace sharebuf::policies {

class CredenceFeatures {
 public:
  CredenceFeatures(uint32_t num_queues, double base_rtt_ns)
      : per_ns_(1.0 / base_rtt_ns), ewma_queue_(num_queues, 0), last_queue_ns_(num_queues, 0) {}

  // Updates the EWMAs with an arrival to `queue` and returns its features.
  void observe(uint64_t now_ns, uint32_t queue, double queue_cells, double total_cells,
               double (&out)[kOracleFeatures]) noexcept {
    const double w_total = weight(now_ns, last_ns_);
    const double w_queue = weight(now_ns, last_queue_ns_[queue]);
    last_ns_ = now_ns;
    last_queue_ns_[queue] = now_ns;
    ewma_queue_[queue] += w_queue * (queue_cells - ewma_queue_[queue]);
    ewma_total_ += w_total * (total_cells - ewma_total_);
    out[0] = queue_cells;
    out[1] = total_cells;
    out[2] = ewma_queue_[queue];
    out[3] = ewma_total_;
  }
  double ewma_total() const noexcept { return ewma_total_; }
  double ewma_queue(uint32_t queue) const noexcept { return ewma_queue_[queue]; }

 private:
  // min(1, elapsed / base RTT); 1 for the first sample.
  double weight(uint64_t now_ns, uint64_t last_ns) const noexcept {
    if (last_ns == 0) return 1.0;
    // Signed: a gap of 2^63 ns is centuries, and the signed conversion has no branch.
    return std::min(
        1.0,
        static_cast<double>(static_cast<int64_t>(now_ns - std::min(now_ns, last_ns))) * per_ns_);
  }

  double per_ns_;  // 1 / base RTT: a multiply on the oracle's path instead of a divide
  std::vector<double> ewma_queue_;
  std::vector<uint64_t> last_queue_ns_;
  double ewma_total_ = 0;
  uint64_t last_ns_ = 0;
};

}  // namespace sharebuf::policies

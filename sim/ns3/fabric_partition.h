// FabricPartition: which MPI rank of a distributed sharebuf-sim run owns which node (C++17,
// header-only). A leaf-spine fabric is cut at its spine links: each rank owns a contiguous block of
// leaves with all their hosts (a host and its leaf never talk across ranks), and the spines are
// dealt out round robin; every leaf-spine link whose ends land on two ranks becomes an ns-3 remote
// point-to-point channel. A star cannot be cut (one switch): it runs on one rank. One rank owns
// everything, which is the plain, single-process run.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/ns3/scenario.h"

namespace sharebuf::sim {

class FabricPartition {
 public:
  FabricPartition() = default;
  // Throws std::invalid_argument if the scenario cannot be split `ranks` ways.
  FabricPartition(const Scenario& s, uint32_t ranks, uint32_t rank)
      : ranks_(ranks),
        rank_(rank),
        leaves_(s.leaf_spine ? s.leaves : 1),
        per_leaf_(s.leaf_spine ? s.hosts_per_leaf : s.hosts) {
    if (ranks == 0 || rank >= ranks) throw std::invalid_argument("bad rank");
    if (ranks > leaves_) {
      throw std::invalid_argument(
          s.leaf_spine
              ? std::to_string(ranks) + " ranks for " + std::to_string(leaves_) +
                    " leaves: at most one rank per leaf (a leaf and its hosts stay on "
                    "one rank)"
              : "a star has one switch and runs on one rank, not " + std::to_string(ranks));
    }
  }

  uint32_t ranks() const { return ranks_; }
  uint32_t rank() const { return rank_; }
  // Switch i in the scenario's order (leaves, then spines).
  uint32_t switch_owner(uint32_t i) const {
    return i < leaves_ ? i * ranks_ / leaves_ : (i - leaves_) % ranks_;
  }
  uint32_t host_owner(uint32_t h) const { return switch_owner(h / per_leaf_); }
  bool owns_switch(uint32_t i) const { return switch_owner(i) == rank_; }
  bool owns_host(uint32_t h) const { return host_owner(h) == rank_; }

 private:
  uint32_t ranks_ = 1, rank_ = 0, leaves_ = 1, per_leaf_ = 1;
};

}  // namespace sharebuf::sim

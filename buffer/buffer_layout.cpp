#include "buffer/buffer_layout.h"

#include <stdexcept>

namespace sharebuf::buffer {

std::string_view to_string(PriorityGroup g) noexcept {
  return g == PriorityGroup::kHigh ? "high" : "low";
}

BufferLayout::BufferLayout(uint32_t capacity_cells, uint32_t cell_bytes,
                           std::vector<PortSpec> ports)
    : capacity_cells_(capacity_cells), cell_bytes_(cell_bytes) {
  if (capacity_cells == 0) throw std::invalid_argument("buffer capacity must be at least 1 cell");
  // Above 2^30 cells the pool's arrays would need more than 100 GB; it is a typo, not a switch.
  if (capacity_cells > (1u << 30)) {
    throw std::invalid_argument("buffer capacity of " + std::to_string(capacity_cells) +
                                " cells is larger than the supported 2^30 cells");
  }
  if (cell_bytes < 16 || cell_bytes > 16384) {
    throw std::invalid_argument("cell_bytes must be between 16 and 16384, got " +
                                std::to_string(cell_bytes));
  }
  if (ports.empty()) throw std::invalid_argument("the buffer needs at least one port");
  for (uint32_t p = 0; p < ports.size(); ++p) {
    const PortSpec& spec = ports[p];
    if (spec.num_queues == 0) {
      throw std::invalid_argument("port " + std::to_string(p) + " has no queues");
    }
    if (!spec.queue_groups.empty() && spec.queue_groups.size() != spec.num_queues) {
      throw std::invalid_argument("port " + std::to_string(p) + " lists " +
                                  std::to_string(spec.queue_groups.size()) + " queue groups for " +
                                  std::to_string(spec.num_queues) + " queues");
    }
    port_first_queue_.push_back(static_cast<uint32_t>(queue_port_.size()));
    port_num_queues_.push_back(spec.num_queues);
    for (uint32_t k = 0; k < spec.num_queues; ++k) {
      queue_port_.push_back(p);
      queue_group_.push_back(spec.queue_groups.empty() ? PriorityGroup::kLow
                                                       : spec.queue_groups[k]);
    }
    if (queue_port_.size() > kMaxQueues) {
      throw std::invalid_argument("more than " + std::to_string(kMaxQueues) + " queues");
    }
  }
}

}  // namespace sharebuf::buffer

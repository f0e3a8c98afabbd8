// BufferLayout: the shape of the shared buffer — its size in cells, the cell size, the ports and
// the queues of each port, and each queue's priority group. Queues are numbered flat across all
// ports (port 0's queues first); every per-queue array in sharebuf is indexed by that flat id.
// Immutable once built, so every thread may read it without synchronisation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sharebuf::buffer {

// FB and ABM divide the buffer between two priority groups (FB paper, section 4).
enum class PriorityGroup : uint8_t { kLow = 0, kHigh = 1 };
inline constexpr uint32_t kNumPriorityGroups = 2;

std::string_view to_string(PriorityGroup g) noexcept;

struct PortSpec {
  uint32_t num_queues = 1;
  // One entry per queue; empty means every queue is in the low group.
  std::vector<PriorityGroup> queue_groups;
};

class BufferLayout {
 public:
  static constexpr uint32_t kDefaultCellBytes = 80;  // Tofino's cell size
  static constexpr uint32_t kMaxFrameBytes = 9216;   // jumbo frames
  static constexpr uint32_t kMaxQueues = 4096;

  // Throws std::invalid_argument naming the bad value.
  BufferLayout(uint32_t capacity_cells, uint32_t cell_bytes, std::vector<PortSpec> ports);

  uint32_t capacity_cells() const noexcept { return capacity_cells_; }
  uint32_t cell_bytes() const noexcept { return cell_bytes_; }
  uint32_t num_ports() const noexcept { return static_cast<uint32_t>(port_first_queue_.size()); }
  uint32_t num_queues() const noexcept { return static_cast<uint32_t>(queue_port_.size()); }

  uint32_t queue_id(uint32_t port, uint32_t index) const noexcept {
    return port_first_queue_[port] + index;
  }
  uint32_t first_queue(uint32_t port) const noexcept { return port_first_queue_[port]; }
  uint32_t queues_on_port(uint32_t port) const noexcept { return port_num_queues_[port]; }
  uint32_t port_of(uint32_t queue) const noexcept { return queue_port_[queue]; }
  PriorityGroup group_of(uint32_t queue) const noexcept { return queue_group_[queue]; }

  // cells(frame) = ceil(bytes / cell_bytes); a zero-byte frame still takes one cell.
  uint32_t cells_for(uint32_t bytes) const noexcept {
    return bytes == 0 ? 1 : (bytes + cell_bytes_ - 1) / cell_bytes_;
  }
  uint32_t max_frame_cells() const noexcept { return cells_for(kMaxFrameBytes); }

 private:
  uint32_t capacity_cells_;
  uint32_t cell_bytes_;
  std::vector<uint32_t> port_first_queue_;
  std::vector<uint32_t> port_num_queues_;
  std::vector<uint32_t> queue_port_;
  std::vector<PriorityGroup> queue_group_;
};

}  // namespace sharebuf::buffer

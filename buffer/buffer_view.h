// BufferView: how a policy reads the buffer. In `exact` mode it reads BufferState's live
// counters; in `probe` mode it reads the ProbeRegisters an ingress reader sees at a time (up to
// one probe interval plus the probe delay old). Both are the same Occupancy layout, so switching
// the mode swaps one pointer and the policy's code does not branch on it. A view is a value: RX
// workers build one per batch from the current mode and time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "buffer/buffer_state.h"
#include "buffer/occupancy.h"
#include "buffer/probe_registers.h"

namespace sharebuf::buffer {

enum class ViewMode : uint8_t { kExact = 0, kProbe = 1 };

constexpr std::string_view to_string(ViewMode m) noexcept {
  return m == ViewMode::kExact ? "exact" : "probe";
}
std::optional<ViewMode> view_mode_from_string(std::string_view s) noexcept;

class BufferView {
 public:
  BufferView(const Occupancy& source, const BufferLayout& layout) noexcept
      : src_(&source), layout_(&layout), capacity_(layout.capacity_cells()) {}

  static BufferView exact(const BufferState& state) noexcept {
    return BufferView(state.live(), state.layout());
  }
  static BufferView probe(const ProbeRegisters& regs, const BufferState& state,
                          uint64_t now_ns) noexcept {
    return BufferView(regs.visible(now_ns), state.layout());
  }
  static BufferView of(ViewMode mode, const BufferState& state, const ProbeRegisters& regs,
                       uint64_t now_ns) noexcept {
    return mode == ViewMode::kExact ? exact(state) : probe(regs, state, now_ns);
  }

  const BufferLayout& layout() const noexcept { return *layout_; }
  uint32_t capacity_cells() const noexcept { return capacity_; }
  uint32_t queue_cells(uint32_t q) const noexcept {
    return src_->queue[q].v.load(std::memory_order_relaxed);
  }
  uint32_t port_cells(uint32_t p) const noexcept {
    return src_->port[p].v.load(std::memory_order_relaxed);
  }
  uint32_t group_cells(PriorityGroup g) const noexcept {
    return src_->group[static_cast<uint32_t>(g)].load(std::memory_order_relaxed);
  }
  uint32_t total_cells() const noexcept { return src_->total.load(std::memory_order_relaxed); }
  // Rem = B - Occ, never negative.
  uint32_t remaining_cells() const noexcept {
    return capacity_ - std::min(capacity_, total_cells());
  }
  uint32_t active_queues(PriorityGroup g) const noexcept {
    return clamp(src_->active_in_group[static_cast<uint32_t>(g)].load(std::memory_order_relaxed));
  }
  // Queues holding at least ceil(B / N) cells (N = every queue of the switch).
  uint32_t long_queues() const noexcept {
    return clamp(src_->long_queues.load(std::memory_order_relaxed));
  }
  uint32_t active_queues_on_port(uint32_t p) const noexcept {
    return clamp(src_->active_on_port[p].load(std::memory_order_relaxed));
  }

 private:
  static uint32_t clamp(int32_t v) noexcept { return v < 0 ? 0u : static_cast<uint32_t>(v); }

  const Occupancy* src_;
  const BufferLayout* layout_;
  uint32_t capacity_;
};

}  // namespace sharebuf::buffer

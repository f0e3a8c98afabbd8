// lqd — Longest Queue Drop with push-out (docs/policies/lqd.md): a frame that fits in the pool is
// accepted. When it does not, the push-outs are planned first: take the longest queue other
// than the arrival's that still has a frame (lowest index among equals); if it is not longer
// than the arrival's queue, drop the arrival (reason pool_full: the buffer is full and LQD picked
// the arrival) and push nothing out; else plan to remove one frame from its tail — or its head,
// with `push_out = "head"` — and pick again, until the arrival fits. Then the plan is carried out
// and the arrival accepted, so no frame is ever pushed out for an arrival that is then dropped.
// admit() answers from the view whether a victim exists; the plan and its execution run in
// SharedBuffer::make_room() with longest_other() as the rule, atomically with respect to other
// push-outs. Pushed-out frames are counted as their own queue's drops with reason pushed_out.
//
// Cost: a scan of every queue's occupancy, only when the buffer is full.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class LqdPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "lqd";
  static constexpr std::array<ParamSpec, 1> kParams{{
      {"push_out", ParamType::kString, "tail",
       "evict from the victim's \"tail\" (newest) or \"head\"", 0, 0, "tail,head"},
  }};

  LqdPolicy(const Params& params, const PolicyEnv& env);

  static constexpr uint32_t kNoVictim = UINT32_MAX;
  // LQD's rule: the longest queue other than q that still has a frame (lowest index among
  // equals), or kNoVictim if it is not longer than q. `cells(j)` is queue j's length in cells,
  // `has_frame(j)` whether it still holds a frame that may be pushed out.
  template <typename Cells, typename HasFrame>
  static uint32_t longest_other(uint32_t q, uint32_t num_queues, Cells&& cells,
                                HasFrame&& has_frame) noexcept {
    uint32_t victim = kNoVictim;
    uint32_t longest = cells(q);
    for (uint32_t j = 0; j < num_queues; ++j) {
      if (j == q) continue;
      const uint32_t c = cells(j);
      if (c > longest && has_frame(j)) {
        victim = j;
        longest = c;
      }
    }
    return victim;
  }
  // longest_other() over plain arrays: the victim picker SharedBuffer::make_room() takes.
  static uint32_t pick_victim(uint32_t q, std::span<const uint32_t> cells,
                              std::span<const uint8_t> has_frame) noexcept {
    return longest_other(
        q, static_cast<uint32_t>(cells.size()), [&](uint32_t j) { return cells[j]; },
        [&](uint32_t j) { return has_frame[j] != 0; });
  }

  std::string_view name() const noexcept override { return kName; }
  VictimPicker victim_picker() const noexcept override { return &pick_victim; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  // LQD has no threshold: a queue may grow by all that is left plus what it can push out.
  uint32_t threshold_cells(uint32_t, uint8_t, const BufferView& view) const noexcept override {
    return view.capacity_cells();
  }

 private:
  bool from_head_ = false;
};

}  // namespace sharebuf::policies

// Verdict: what a policy decides for one arriving frame. Eight bytes, returned by value on the
// hot path.
#pragma once

#include <cstdint>
#include <string_view>

#include "buffer/drop_reason.h"

namespace sharebuf::policies {

using buffer::DropReason;

enum class Action : uint8_t {
  kAccept,      // enqueue the frame (it is still refused with pool_full if its cells do not fit)
  kDrop,        // drop it; `reason` says why
  kTrim,        // cut it to its headers (trimming overflow action; see docs/policies.md)
  kPushOut,     // LQD: make room by pushing out frames of the longest other queues (planned first,
                // starting from `victim_queue`; SharedBuffer::make_room), then enqueue it
  kAcceptInto,  // enqueue it in `victim_queue`, another queue of its port, instead (IB's DPP:
                // a flow's first packets to a priority queue); counted there
};

constexpr std::string_view to_string(Action a) noexcept {
  switch (a) {
    case Action::kAccept:
      return "accept";
    case Action::kDrop:
      return "drop";
    case Action::kTrim:
      return "trim";
    case Action::kPushOut:
      return "push_out";
    case Action::kAcceptInto:
      return "accept_into";
  }
  return "?";
}

struct Verdict {
  Action action = Action::kAccept;
  DropReason reason = DropReason::kNone;
  bool from_head = false;     // kPushOut: evict the victim's oldest frames instead of its newest
  uint32_t victim_queue = 0;  // kPushOut: the first victim; kAcceptInto: the queue it goes to

  static constexpr Verdict accept() noexcept { return {}; }
  static constexpr Verdict drop(DropReason r) noexcept { return {Action::kDrop, r, false, 0}; }
  static constexpr Verdict trim(DropReason r) noexcept { return {Action::kTrim, r, false, 0}; }
  static constexpr Verdict push_out(uint32_t victim, bool from_head = false) noexcept {
    return {Action::kPushOut, DropReason::kNone, from_head, victim};
  }
  static constexpr Verdict accept_into(uint32_t queue) noexcept {
    return {Action::kAcceptInto, DropReason::kNone, false, queue};
  }
  // Accepted, in the arrival's queue or (kAcceptInto) another of its port.
  constexpr bool accepted() const noexcept {
    return action == Action::kAccept || action == Action::kAcceptInto;
  }
  friend constexpr bool operator==(const Verdict&, const Verdict&) = default;
};
static_assert(sizeof(Verdict) == 8);

}  // namespace sharebuf::policies

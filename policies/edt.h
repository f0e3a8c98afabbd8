// edt — Enhanced Dynamic Threshold (Shan et al., INFOCOM 2015), a baseline (docs/policies/edt.md).
// The exact state machine implemented here, per queue:
//   controlled (DT: accept iff Q[q] < alpha * Rem), armed or not;
//   uncontrolled (CS: accept iff the frame fits) while a microburst is absorbed.
//   - controlled & armed -> uncontrolled: an arrival finds the queue at most `near_empty_cells`
//     long (a burst starts from (near) empty); the burst's clock starts.
//   - uncontrolled -> controlled (disarmed): an arrival finds the queue shorter than the previous
//     arrival did (it stopped growing: the port drains faster than the burst arrives), or
//     `time_limit_us` has passed since the burst started.
//   - disarmed -> armed: the queue is seen empty (at an arrival or a departure), so one burst is
//     absorbed once and a long flow cannot re-enter CS by hovering near empty.
// Queues start controlled and armed.
// describe() counts, over all queues, the bursts started and how each ended, and the frames a
// burst admitted that DT would have refused (what EDT changed).
//
// Thread-safety: the per-queue state is relaxed atomics, written by the RX workers that admit to
// the queue and by its egress owner (re-arming); concurrent arrivals to one queue may both see
// the old state, which at worst admits one more frame under the state being left.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class EdtPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "edt";
  static constexpr std::array<ParamSpec, 3> kParams{{
      {"alpha", ParamType::kNumber, "1.0", "DT alpha of classes that set none (controlled state)",
       1.0 / 1024, 1024},
      {"near_empty_cells", ParamType::kInteger, "10",
       "a burst is recognised when it starts from a queue at most this long", 0, 1 << 30},
      {"time_limit_us", ParamType::kNumber, "100",
       "longest time a queue stays uncontrolled (about one base RTT)", 0.001, 1e9},
  }};

  EdtPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  bool uncontrolled(uint32_t queue) const noexcept {
    return state_[queue].uncontrolled.load(std::memory_order_relaxed);
  }

 private:
  struct QueueState {
    std::atomic<bool> uncontrolled{false};
    std::atomic<bool> armed{true};
    std::atomic<uint64_t> since_ns{0};
    std::atomic<uint32_t> last_len{0};
    // For describe(), summed over the queues: kept with the queue's state, whose line a burst's
    // arrivals write anyway, rather than in one line every queue's arrivals would share.
    std::atomic<uint64_t> started{0};
    std::atomic<uint64_t> ended_shrinking{0};
    std::atomic<uint64_t> ended_time_limit{0};
    std::atomic<uint64_t> admitted_over_dt{0};
  };

  double alpha_;
  uint32_t near_empty_;
  double time_limit_ns_;
  AlphaTable alphas_;
  std::unique_ptr<QueueState[]> state_;
};

}  // namespace sharebuf::policies

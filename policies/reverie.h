// reverie — Reverie (Addanki, Bai, Schmid, Apostolaki, NSDI 2024), a baseline
// (docs/policies/reverie.md). Its loss-tolerant (lossy) rule, as the authors' ns-3 code runs it
// (inet-tub/ns3-datacenter, simulator/ns-3.35/src/point-to-point/model/switch-mmu.cc:
// SwitchMmu::ReverieThreshold, CheckEgressAdmission with bufferModel "reverie", and
// RemoveFromEgressAdmission). Per queue q, with index k on its port:
//   L[q]    a low-pass filter of q's length, updated at each departure from q:
//           L = gamma * L + (1 - gamma) * Q[q], then L = min(L, Q[q]) (Q after the departure);
//           arrivals leave it alone, so a burst raises it only as fast as the queue drains.
//   s[q]    q's saturation min(1, L[q] / congestion), refreshed when a frame arrives at q;
//   N[k]    max(1, the sum of s over the queues of index k on every port);
//   T       alpha * Rem / N[k], with alpha = first_rtt_alpha for a flow's first RTT
//           (policies/first_rtt.h) and the class's alpha otherwise;
//   accept iff L[q] + cells <= T (and the frame fits in the pool).
// The queue is judged by its filtered length, not its instantaneous one: a burst that outruns
// the filter is admitted as long as the buffer holds it, while a standing queue meets T.
// The lossless (PFC) half of Reverie and its shared ingress/egress accounting have no
// counterpart here (sharebuf has no PFC): the page says what that leaves out.
//
// Thread-safety: L[q] is written only at q's departures (its port's egress owner) and read by RX
// workers (relaxed atomics). s[q] is swapped and N[k] adjusted by the difference with atomic
// read-modify-writes, in 1/65536ths, so concurrent arrivals keep N[k] the exact sum of the s[q].
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "policies/class_alpha.h"
#include "policies/first_rtt.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class ReveriePolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "reverie";
  static constexpr auto kParams = join_params(
      std::array<ParamSpec, 4>{{
          {"alpha", ParamType::kNumber, "1.0",
           "alpha of classes that set none (the authors' MMU default)", 1.0 / 1024, 1024},
          {"first_rtt_alpha", ParamType::kNumber, "1024",
           "alpha for a flow's first RTT (the authors' alphaHigh)", 1.0 / 1024, 1 << 20},
          {"gamma", ParamType::kNumber, "0.999",
           "low-pass filter weight of the old value, per departure (the authors' scripts)", 0,
           0.999999},
          {"congestion_bytes", ParamType::kInteger, "20480",
           "filtered length at which a queue counts as fully congested", 1, 1ll << 40},
      }},
      FirstRtt::kParams);

  // Saturation is kept in these units so that N[k] is an exact integer sum.
  static constexpr int64_t kSatOne = 65536;

  ReveriePolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  void on_install(const BufferView& view) noexcept override;
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  // Queue q's filtered length in cells, and the congested-queue count N of its index.
  double filtered_cells(uint32_t queue) const noexcept {
    return lpf_[queue].load(std::memory_order_relaxed);
  }
  double congested(uint32_t queue) const noexcept;

 private:
  ReveriePolicy(const ParamReader& reader, const PolicyEnv& env);
  uint32_t index_of(uint32_t queue) const noexcept {
    return queue - env().layout->first_queue(env().layout->port_of(queue));
  }

  double alpha_;
  double first_rtt_alpha_;
  double gamma_;
  double congestion_cells_;
  AlphaTable alphas_;
  FirstRtt first_rtt_;
  std::unique_ptr<std::atomic<double>[]> lpf_;    // by queue, cells
  std::unique_ptr<std::atomic<int64_t>[]> sat_;   // by queue, 1/kSatOne
  std::unique_ptr<std::atomic<int64_t>[]> nsum_;  // by queue index on a port, 1/kSatOne
};

}  // namespace sharebuf::policies

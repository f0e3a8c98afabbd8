// ib — Intelligent Buffer (Cisco's Nexus 9000 "intelligent buffer": approximate fair dropping,
// AFD, on top of Dynamic Thresholds), with the formula the ABM and Credence authors' ns-3 code
// computes for their comparisons (docs/policies/ib.md; that code runs it otherwise: see the
// variants below):
//   accept iff Q[q] < alpha_c * Rem (DT), and not an AFD drop.
// AFD, per queue: every `afd_window_us`, at the port's first arrival after the window, each of the
// port's queues takes M = the bytes that arrived at it in the window just ended (+1) and moves its
// fair share by a proportional-integral step toward `qref_bytes`:
//   MFair <- max(0, MFair - 1.8 (Qnow - Qref) + 1.7 (Qold - Qref)),  Qold <- Qnow
// (MFair starts at `mfair_start_bytes`, 4 MB). An arrival at a queue longer than
// `afd_min_queue_bytes` is dropped with probability 1 - min(15 M, MFair) / (15 M): a queue whose
// arrivals outrun its fair share loses the excess. AFD drops count as `threshold` drops; describe()
// counts them apart.
//
// DPP (dynamic packet prioritisation), off unless `dpp_packets` > 0: a flow's first dpp_packets
// - 1 frames since it (re)started (again after `dpp_window_us` without a frame) go to queue
// `dpp_queue` of their port (meant to be served first: a strict-priority queue), held there to DT
// alone and left out of AFD (Verdict::accept_into; the authors' enableDPPQueue, off by default).
//
// Threads: admit() on every RX worker. The per-queue counters are relaxed atomics; a port's window
// update takes the port's lock with try_lock (a worker that finds it taken goes on with the
// values of the window before). The random draws come from a seeded counter (the same arrivals
// in the same order give the same drops: the replay and ns-3 agree).
//
// Two variants (`variant`): "intended" (the default) runs AFD and DPP as described above;
// "as-coded" runs them as the authors' GenQueueDisc::IntelligentBuffer does
// (inet-tub/ns3-datacenter, gen-queue-disc.cc). That code calls DropAfd(DPPQueue, dropP) against
// the declaration DropAfd(double prob, uint32_t priority): the queue's index becomes the
// probability and the truncated dropP the queue whose length is checked. So an arrival at the
// port's queue k is an AFD drop iff a draw in [0, 1) is below k (never for queue 0, always for k >=
// 1) and the port's queue floor(dropP) (queue 0 unless MFair is 0) holds more than
// afd_min_queue_bytes. DPP holds a redirected frame to the alpha of the DPP queue's class (their
// alphas[0]) rather than its own.
//
// Cost: DT's multiply and compare, one relaxed add, and a draw only above afd_min_queue_bytes.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "common/spin_lock.h"
#include "policies/class_alpha.h"
#include "policies/flow_table.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class IbPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "ib";
  static constexpr std::array<ParamSpec, 10> kParams{{
      {"alpha", ParamType::kNumber, "0.5", "DT alpha of classes that set none", 1.0 / 1024, 1024},
      {"afd_window_us", ParamType::kNumber, "50",
       "how often each queue's fair share is updated (the authors' experiments: 50 us)", 0.001,
       1e9},
      {"qref_bytes", ParamType::kInteger, "15000",
       "the queue length AFD steers towards (the authors' experiments set a BDP)", 0, 1ll << 40},
      {"afd_min_queue_bytes", ParamType::kInteger, "153600",
       "AFD drops only from queues longer than this (Cisco's 150 KiB for 10 Gbit/s)", 0, 1ll << 40},
      {"mfair_start_bytes", ParamType::kNumber, "4000000",
       "each queue's fair share before its first update (the authors' code: 4 MB)", 0, 1e15},
      {"dpp_packets", ParamType::kInteger, "0",
       "DPP: a flow's frames before its dpp_packets-th go to dpp_queue (0: no DPP; the authors' "
       "experiments: a BDP in packets)",
       0, 1ll << 32},
      {"dpp_window_us", ParamType::kNumber, "5000",
       "DPP: a flow idle this long starts again (its count restarts)", 0.001, 1e9},
      {"dpp_queue", ParamType::kInteger, "0",
       "DPP: the port's queue (index) a flow's first frames go to", 0, 255},
      {"seed", ParamType::kInteger, "1", "seed of the AFD drops' random draws", 0,
       18446744073709551615.0},
      {"variant", ParamType::kString, "intended",
       "\"intended\": AFD and DPP as Cisco describes them; \"as-coded\": as the authors' ns-3 "
       "code runs them (DropAfd's swapped arguments; DPP held to its queue's alpha)",
       0, 0, "intended,as-coded"},
  }};
  static constexpr double kA1 = 1.8, kA2 = 1.7;  // the PI step's gains
  static constexpr double kShareScale = 15;      // 15 M against MFair

  IbPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  // AFD's drop probability for an arrival at q now (tests, describe()).
  double drop_probability(uint32_t q) const noexcept;

 private:
  IbPolicy(const ParamReader& reader, const PolicyEnv& env);
  void roll_window(uint32_t port, uint64_t now_ns, const BufferView& view) noexcept;
  double draw() noexcept;
  bool as_coded_afd_drop(const ArrivalContext& ctx, const BufferView& view) noexcept;

  struct alignas(64) QueueAfd {
    std::atomic<uint64_t> arrived{1};  // bytes this window (+1, as the authors' code)
    std::atomic<uint64_t> last{1};     // bytes in the window before (M)
    std::atomic<double> mfair{0};
    double qold = 0;  // under the port's lock
    std::atomic<uint64_t> afd_drops{0};
  };
  struct alignas(64) PortWindow {
    common::SpinLock lock;
    std::atomic<uint64_t> start_ns{0};
  };

  double alpha_;
  AlphaTable alphas_;
  uint64_t window_ns_;
  double qref_bytes_;
  uint32_t afd_min_cells_;
  uint64_t seed_;
  std::unique_ptr<QueueAfd[]> queues_;
  std::unique_ptr<PortWindow[]> ports_;
  std::atomic<uint64_t> draws_{0};
  bool as_coded_ = false;
  uint64_t dpp_packets_;
  uint32_t dpp_queue_;
  FlowTable dpp_flows_;
};

}  // namespace sharebuf::policies

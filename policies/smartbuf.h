// smartbuf — Smartbuf (Smartbuf paper, Algorithm 1; docs/policies/smartbuf.md). Per queue, on every
// dequeue:
//   g = 1/4 * g_raw + 3/4 * g_prev        (g_raw: Protean's line-rate-normalised gradient)
//   cur > max_seen:            max_seen = cur, temp = (g, max_seen)
//   cur < beta * max_seen:     the burst ended; if max_seen > B / sigma, temp goes into the global
//                              map (key gradient, value max_seen); temp and max_seen reset
// Threshold: while the queue's ongoing max_seen exceeds B / sigma (a burst) and the map holds at
// least K entries (the real phase; before that, the learning phase), the mean value of the K keys
// >= g closest to g — fewer if fewer exist, DT if none; otherwise DT, alpha(class) * Rem.
// Accept iff Q[q] < threshold. Map entries age out after `ttl_s`; the map holds `max_entries`.
//
// Every burst that ends above B / sigma is also kept in a small ring with the demand Smartbuf
// predicted for it (its last threshold) next to the peak it reached: E5's prediction error.
//
// `sync = "probe"` takes the samples from the probe registers once per probe interval instead of
// at every dequeue; an interval without change is a sample of the same length.
//
// Thread-safety: a queue's state is written by its port's egress owner only — or, with probe
// sync, by the one RX worker delivering probes — (relaxed atomics, so
// admit() and describe() may read them anywhere); the map is shared by all ports and guarded by a
// spin lock taken only while a burst is on or ends.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "common/spin_lock.h"
#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"
#include "policies/smartbuf_map.h"

namespace sharebuf::policies {

class SmartbufPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "smartbuf";
  static constexpr std::array<ParamSpec, 8> kParams{{
      {"alpha", ParamType::kNumber, "1.0", "DT alpha of classes that set none (between bursts)",
       1.0 / 1024, 1024},
      {"beta", ParamType::kNumber, "0.5",
       "a burst has ended when the queue falls below beta * its peak", 0, 1},
      {"sigma", ParamType::kNumber, "5", "a burst counts when its peak exceeds B / sigma", 1, 1e6},
      {"k", ParamType::kInteger, "3", "nearest larger gradients averaged for the threshold", 1, 64},
      {"ttl_s", ParamType::kNumber, "10", "age after which a learned signature is forgotten, s",
       1e-6, 1e6},
      {"max_entries", ParamType::kInteger, "64", "size of the signature map (oldest evicted)", 1,
       4096},
      {"gradient_weight", ParamType::kNumber, "0.25", "EWMA weight of the newest gradient sample",
       0, 1},
      {"sync", ParamType::kString, "dequeue",
       "\"dequeue\": learn at every dequeue (the paper's algorithm); \"probe\": from the probe "
       "registers once per probe interval (a Tofino-style implementation)",
       0, 0, "dequeue,probe"},
  }};

  struct Burst {
    uint64_t end_ns = 0;
    uint32_t queue = 0;
    double gradient = 0;           // the signature stored (g at the peak)
    uint32_t predicted_cells = 0;  // the threshold Smartbuf set during the burst; 0 = none
    uint32_t peak_cells = 0;
  };

  SmartbufPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    return view.queue_cells(ctx.queue) < threshold(ctx.queue, ctx.class_id, view)
               ? Verdict::accept()
               : Verdict::drop(DropReason::kThreshold);
  }
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override;
  bool uses_probes() const noexcept override { return sync_probe_; }
  void on_probe(const BufferView& registers, uint64_t boundary_ns,
                uint64_t interval_ns) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  double gradient(uint32_t queue) const noexcept {
    return state_[queue].g.load(std::memory_order_relaxed);
  }
  uint32_t max_seen(uint32_t queue) const noexcept {
    return state_[queue].max_seen.load(std::memory_order_relaxed);
  }
  // The learned threshold of a queue in cells, or nullopt while DT applies.
  std::optional<double> learned_threshold(uint32_t queue) const noexcept;
  bool learning() const;
  std::vector<SmartbufMap::Entry> map_entries() const;
  std::vector<Burst> bursts() const;  // oldest first

 private:
  double threshold(uint32_t queue, uint8_t class_id, const BufferView& view) const noexcept {
    const double learned = state_[queue].thr.load(std::memory_order_relaxed);
    return learned >= 0 ? learned : alphas_[class_id] * view.remaining_cells();
  }

  struct QueueState {
    std::atomic<uint32_t> q_prev{0};
    std::atomic<uint64_t> t_prev{0};
    std::atomic<double> g{0};
    std::atomic<uint32_t> max_seen{0};
    std::atomic<double> g_at_max{0};
    std::atomic<double> thr{-1};  // < 0: DT
  };
  static constexpr size_t kBurstRing = 256;

  // One sample of queue q: length `cur` at t, the change since the previous sample over dt_ns
  // (0: no gradient sample, as two dequeues at one instant).
  void sample(uint32_t queue, uint32_t port, uint32_t cur, uint64_t t_ns, uint64_t dt_ns) noexcept;

  double alpha_;
  double beta_;
  double sigma_;
  uint32_t k_;
  double ttl_s_;
  uint32_t max_entries_;
  double weight_;
  bool sync_probe_;
  double burst_cells_;  // B / sigma
  AlphaTable alphas_;
  std::unique_ptr<QueueState[]> state_;

  mutable common::SpinLock map_lock_;
  SmartbufMap map_;
  std::array<Burst, kBurstRing> bursts_{};
  uint64_t bursts_seen_ = 0;
};

}  // namespace sharebuf::policies

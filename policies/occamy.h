// occamy — preemptive buffer management (Occamy; Shan et al., "Occamy: A Preemptive Buffer
// Management for On-chip Shared-memory Switches", EuroSys 2025; docs/policies/occamy.md): Dynamic
// Thresholds at admission, plus a reclaim that drops frames from the head of queues above their
// threshold, paid for with the memory bandwidth the ports leave unused.
//
// Admission: an empty queue takes the frame (if it fits in the pool); otherwise accept iff
// Q[q] < alpha_c * Rem, as DT.
// Reclaim, before each admission (Policy::reclaim): a token bucket of spare memory bandwidth, in
// cells, fills at `speedup` times the sum of the ports' line rates, holds at most
// `token_cap_bytes`, and every departure spends its cells. While it holds tokens, the first
// queue above its DT threshold (Q[j] > alpha_c * Rem, on the exact counters) in round-robin order
// from after the last queue reclaimed from (or the longest such queue, `victim = "longest"`)
// loses its head frame, which costs that frame's cells. At most kMaxPerArrival per admission.
//
// Three token models (`token_model`), the bucket's rules as each source has them:
// - "sharebuf" (default): the bucket above, in cells, refilled by the time elapsed, drops while it
//   holds more than 0 (up to kMaxPerArrival at an arrival).
// - "simulator", the authors' ns-3 simulator (ants-xjtu/Occamy-Simulation,
//   shared-memory-point-to-point-net-device.cc: TokenAdd, TokenDelete, DropTOKEN): tokens are
//   200-byte units; every tick of 1500 bytes' time at the summed line rates (theirs: one port's
//   1500-byte time / the port count) adds 8, capped at 8; after each tick with tokens > 0, at most
//   one head drop. Departures and head drops spend ceil(bytes / 200). The ticks since the last
//   arrival are played at the arrival (the drops of at most kMaxPerArrival of them).
// - "dpdk", the authors' DPDK prototype (ants-xjtu/Occamy, src/dpdk/runtime.c:
//   app_main_loop_headdrop; main.h: SWITCH_MAX_FREQ, HEADDROP_BUCKET_MAX_SIZE): 200-byte tokens
//   at 55e6 a second (88 Gbit/s, whatever the ports), added when at least 0.5 us has passed and
//   only up to a net balance (added minus what departures and drops spent) of 200 tokens; head
//   drops go on while the balance is >= 0 (so it may end one frame below 0).
// `speedup` and `token_cap_bytes` belong to the "sharebuf" model; setting them with another model
// is refused, so a run never says one bucket and runs another.
//
// Threads: admit() is DT's (no shared state). The bucket and the round-robin cursor sit behind one
// lock that reclaim() only tries: an RX worker that finds it taken leaves the reclaim to the one
// holding it. Departures add their cells to an atomic the reclaim folds in.
//
// Cost: DT's multiply and compare per frame; the reclaim's scan runs only while tokens remain and
// the buffer holds more than min alpha x Rem (below that no queue can be over its threshold), and
// stops at the first queue over its threshold.
#pragma once

#include <array>
#include <atomic>

#include "common/spin_lock.h"
#include "policies/class_alpha.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class OccamyPolicy final : public Policy {
 public:
  static constexpr std::string_view kName = "occamy";
  static constexpr std::array<ParamSpec, 5> kParams{{
      {"alpha", ParamType::kNumber, "8",
       "alpha of classes that set none: DT's threshold, at admission and for the reclaim (the "
       "authors' testbed: 8)",
       1.0 / 1024, 1024},
      {"speedup", ParamType::kNumber, "1.0",
       "memory bandwidth as a multiple of the ports' summed line rates (what the reclaim spends)",
       0, 64},
      {"token_cap_bytes", ParamType::kInteger, "1600",
       "the most spare bandwidth saved up, in bytes (Occamy's simulator: 8 cells of 200 B)", 0,
       1 << 24},
      {"victim", ParamType::kString, "round_robin",
       "which over-threshold queue loses its head: the next in \"round_robin\" order or the "
       "\"longest\"",
       0, 0, "round_robin,longest"},
      {"token_model", ParamType::kString, "sharebuf",
       "the spare-bandwidth bucket: \"sharebuf\" (speedup, token_cap_bytes), the authors' "
       "\"simulator\" (8 tokens of 200 B per 1500-byte tick, one drop a tick) or \"dpdk\" "
       "prototype (55e6 tokens/s, balance cap 200, drops while >= 0)",
       0, 0, "sharebuf,simulator,dpdk"},
  }};
  enum class TokenModel : uint8_t { kSharebuf, kSimulator, kDpdk };
  static constexpr uint32_t kTokenBytes = 200;          // simulator, dpdk: a token's bytes
  static constexpr double kSimulatorTokensPerTick = 8;  // simulator: added per tick, and the cap
  static constexpr double kDpdkTokensPerS = 55e6;       // dpdk: SWITCH_MAX_FREQ
  static constexpr double kDpdkBalanceCap = 200;        // dpdk: HEADDROP_BUCKET_MAX_SIZE
  static constexpr uint64_t kDpdkRefillNs = 500;        // dpdk: refills after sec_tsc / 2e6
  // The most head drops one admission makes (bounds the work an arrival does).
  static constexpr uint32_t kMaxPerArrival = 16;

  OccamyPolicy(const Params& params, const PolicyEnv& env);

  std::string_view name() const noexcept override { return kName; }
  Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept override {
    const uint32_t queued = view.queue_cells(ctx.queue);
    return queued == 0 || queued < alphas_[ctx.class_id] * view.remaining_cells()
               ? Verdict::accept()
               : Verdict::drop(DropReason::kThreshold);
  }
  void on_install(const BufferView& view) noexcept override;
  void on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept override {
    (void)view;
    dequeued_cells_.fetch_add(model_ == TokenModel::kSharebuf ? ev.cells : tokens_of(ev.bytes),
                              std::memory_order_relaxed);
  }
  static uint32_t tokens_of(uint32_t bytes) noexcept {
    return (bytes + kTokenBytes - 1) / kTokenBytes;
  }
  void reclaim(uint64_t now_ns, const BufferView& exact, HeadDropper drop_head,
               void* ctx) noexcept override;
  uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                           const BufferView& view) const noexcept override;
  nlohmann::json describe(const BufferView& view) const override;

  // The queue the reclaim would take a head frame from now, or num_queues if none is over its
  // threshold (tests, describe()).
  uint32_t next_victim(const BufferView& exact) const noexcept;

 private:
  OccamyPolicy(const ParamReader& reader, const PolicyEnv& env);
  bool over_threshold(uint32_t q, const BufferView& exact) const noexcept {
    return exact.queue_cells(q) > alphas_[env().class_of_queue(q)] * exact.remaining_cells();
  }

  // The head drops one reclaim makes, each while `more()` (spending what the drop returns).
  template <typename More, typename Cost>
  void drop_heads(const BufferView& exact, HeadDropper drop_head, void* ctx, uint32_t max_drops,
                  More&& more, Cost&& cost) noexcept;
  void refill(uint64_t now_ns) noexcept;

  TokenModel model_ = TokenModel::kSharebuf;
  double alpha_;
  AlphaTable alphas_;
  double min_alpha_;      // the smallest alpha of any queue's class
  double tokens_per_ns_;  // sharebuf: cells
  double token_cap_;      // sharebuf: cells
  double tick_ns_ = 0;    // simulator: ns between two ticks
  bool longest_ = false;

  common::SpinLock lock_;  // guards the ones below
  double tokens_ = 0;      // sharebuf: cells; simulator: tokens; dpdk: the net balance
  uint64_t last_ns_ = 0;   // sharebuf, dpdk: the last refill; simulator: the last tick played
  uint64_t dequeued_seen_ = 0;
  uint32_t cursor_ = 0;                      // the queue after the last one reclaimed from
  std::atomic<uint64_t> dequeued_cells_{0};  // sharebuf: cells; simulator, dpdk: tokens
};

}  // namespace sharebuf::policies

#include "policies/occamy.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

namespace sharebuf::policies {

OccamyPolicy::OccamyPolicy(const Params& params, const PolicyEnv& env)
    : OccamyPolicy(ParamReader(kName, params, kParams), env) {}

OccamyPolicy::OccamyPolicy(const ParamReader& reader, const PolicyEnv& env)
    : Policy(env), alpha_(reader.number("alpha")), alphas_(resolve_alphas(env, alpha_)) {
  const std::string model = reader.choice("token_model");
  model_ = model == "simulator" ? TokenModel::kSimulator
           : model == "dpdk"    ? TokenModel::kDpdk
                                : TokenModel::kSharebuf;
  // The memory's bandwidth: what every port sending at line rate would read (Occamy's simulator:
  // one MTU per port per MTU time).
  double cells_per_s = 0;
  for (uint32_t p = 0; p < env.layout->num_ports(); ++p)
    cells_per_s += env.rate_cells_per_s(p);
  if (model_ == TokenModel::kSharebuf) {
    tokens_per_ns_ = reader.number("speedup") * cells_per_s * 1e-9;
    token_cap_ = static_cast<double>(reader.integer("token_cap_bytes")) / env.layout->cell_bytes();
  } else {
    for (const char* key : {"speedup", "token_cap_bytes"}) {
      if (reader.has(key))
        reader.fail(key, "belongs to token_model \"sharebuf\"; token_model \"" + model +
                             "\" runs the authors' constants (docs/policies/occamy.md)");
    }
    tokens_per_ns_ = 0;
    token_cap_ = 0;
    // 1500 bytes at the summed line rates.
    const double bytes_per_s = cells_per_s * env.layout->cell_bytes();
    tick_ns_ = bytes_per_s > 0 ? 1500.0 / bytes_per_s * 1e9 : 0;
  }
  longest_ = reader.choice("victim") == "longest";
  min_alpha_ = alpha_;
  for (uint32_t q = 0; q < env.layout->num_queues(); ++q)
    min_alpha_ = std::min(min_alpha_, alphas_[env.class_of_queue(q)]);
  set_reclaims();
  set_params(reader.values());
}

void OccamyPolicy::on_install(const BufferView&) noexcept {
  std::lock_guard guard(lock_);
  tokens_ = 0;
  last_ns_ = 0;
  dequeued_seen_ = dequeued_cells_.load(std::memory_order_relaxed);
}

uint32_t OccamyPolicy::next_victim(const BufferView& exact) const noexcept {
  const uint32_t n = exact.layout().num_queues();
  // No queue holds more than Occ: while Occ <= min alpha x Rem none is over its threshold, and
  // the scan (most of the reclaim's cost) is skipped.
  if (exact.total_cells() <= min_alpha_ * exact.remaining_cells()) return n;
  if (longest_) {
    uint32_t victim = n;
    uint32_t longest = 0;
    for (uint32_t q = 0; q < n; ++q) {
      if (exact.queue_cells(q) > longest && over_threshold(q, exact)) {
        victim = q;
        longest = exact.queue_cells(q);
      }
    }
    return victim;
  }
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t q = (cursor_ + k) % n;
    if (over_threshold(q, exact)) return q;
  }
  return n;
}

template <typename More, typename Cost>
void OccamyPolicy::drop_heads(const BufferView& exact, HeadDropper drop_head, void* ctx,
                              uint32_t max_drops, More&& more, Cost&& cost) noexcept {
  const uint32_t n = exact.layout().num_queues();
  for (uint32_t k = 0; k < max_drops && more(); ++k) {
    const uint32_t q = next_victim(exact);
    if (q >= n) break;
    tokens_ -= cost(drop_head(ctx, q));  // nothing if its egress took the last frame meanwhile
    cursor_ = (q + 1) % n;
  }
}

void OccamyPolicy::reclaim(uint64_t now_ns, const BufferView& exact, HeadDropper drop_head,
                           void* ctx) noexcept {
  std::unique_lock guard(lock_, std::try_to_lock);
  if (!guard.owns_lock()) return;  // another RX worker is reclaiming at this instant
  // What departures spent since the last look (cells or tokens, as the model counts).
  const uint64_t dequeued = dequeued_cells_.load(std::memory_order_relaxed);
  const double spent = static_cast<double>(dequeued - dequeued_seen_);
  dequeued_seen_ = dequeued;
  const auto by_tokens = [](HeadDrop d) { return static_cast<double>(tokens_of(d.bytes)); };
  switch (model_) {
    case TokenModel::kSharebuf:
      // Refilled for the time since the last look (capped), minus what departures read.
      if (now_ns > last_ns_) {
        tokens_ =
            std::min(token_cap_, tokens_ + static_cast<double>(now_ns - last_ns_) * tokens_per_ns_);
        last_ns_ = now_ns;
      }
      tokens_ -= spent;
      drop_heads(
          exact, drop_head, ctx, kMaxPerArrival, [&] { return tokens_ > 0; },
          [](HeadDrop d) { return static_cast<double>(d.cells); });
      return;
    case TokenModel::kSimulator: {
      // Every tick: +8 (capped at 8), then one head drop if tokens > 0. The ticks since the last
      // arrival are played now; the departures between them are spent first.
      tokens_ -= spent;
      if (tick_ns_ <= 0) return;
      const uint64_t tick = static_cast<uint64_t>(static_cast<double>(now_ns) / tick_ns_);
      uint64_t ticks = tick > last_ns_ ? tick - last_ns_ : 0;
      last_ns_ = std::max(last_ns_, tick);
      if (ticks > kMaxPerArrival) {  // the older ticks only refill (their drops are lost)
        tokens_ = std::min(
            kSimulatorTokensPerTick,
            tokens_ + kSimulatorTokensPerTick * static_cast<double>(ticks - kMaxPerArrival));
        ticks = kMaxPerArrival;
      }
      for (uint64_t t = 0; t < ticks; ++t) {
        tokens_ = std::min(kSimulatorTokensPerTick, tokens_ + kSimulatorTokensPerTick);
        drop_heads(
            exact, drop_head, ctx, 1, [&] { return tokens_ > 0; }, by_tokens);
      }
      return;
    }
    case TokenModel::kDpdk: {
      // The balance is what was added minus what departures and drops spent; a refill after at
      // least 0.5 us adds 55e6 tokens a second, only up to a balance of 200.
      tokens_ -= spent;
      if (now_ns >= last_ns_ + kDpdkRefillNs) {
        if (tokens_ < kDpdkBalanceCap) {
          const double add =
              std::floor(kDpdkTokensPerS * static_cast<double>(now_ns - last_ns_) * 1e-9);
          tokens_ += std::min(kDpdkBalanceCap - tokens_, add);
        }
        last_ns_ = now_ns;
      }
      drop_heads(
          exact, drop_head, ctx, kMaxPerArrival, [&] { return tokens_ >= 0; }, by_tokens);
      return;
    }
  }
}

uint32_t OccamyPolicy::threshold_cells(uint32_t, uint8_t class_id,
                                       const BufferView& view) const noexcept {
  return dt_threshold_cells(alphas_[class_id], view);
}

nlohmann::json OccamyPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  switch (model_) {
    case TokenModel::kSharebuf:
      d["state"]["reclaim_tokens_per_us"] = tokens_per_ns_ * 1000;
      d["state"]["token_cap_cells"] = token_cap_;
      break;
    case TokenModel::kSimulator:
      d["state"]["tick_ns"] = tick_ns_;
      d["state"]["tokens_per_tick"] = kSimulatorTokensPerTick;
      break;
    case TokenModel::kDpdk:
      d["state"]["tokens_per_us"] = kDpdkTokensPerS * 1e-6;
      d["state"]["balance_cap_tokens"] = kDpdkBalanceCap;
      break;
  }
  return d;
}

}  // namespace sharebuf::policies

#include "policies/occamy.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace sharebuf::policies {

OccamyPolicy::OccamyPolicy(const Params& params, const PolicyEnv& env)
    : OccamyPolicy(ParamReader(kName, params, kParams), env) {}

OccamyPolicy::OccamyPolicy(const ParamReader& reader, const PolicyEnv& env)
    : Policy(env), alpha_(reader.number("alpha")), alphas_(resolve_alphas(env, alpha_)) {
  // The memory's bandwidth: what every port sending at line rate would read, times the speedup
  // (Occamy's simulator: one MTU per port per MTU time, i.e. speedup 1).
  double cells_per_s = 0;
  for (uint32_t p = 0; p < env.layout->num_ports(); ++p)
    cells_per_s += env.rate_cells_per_s(p);
  tokens_per_ns_ = reader.number("speedup") * cells_per_s * 1e-9;
  token_cap_ = static_cast<double>(reader.integer("token_cap_bytes")) / env.layout->cell_bytes();
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

void OccamyPolicy::reclaim(uint64_t now_ns, const BufferView& exact, HeadDropper drop_head,
                           void* ctx) noexcept {
  std::unique_lock guard(lock_, std::try_to_lock);
  if (!guard.owns_lock()) return;  // another RX worker is reclaiming at this instant
  // The bucket: refilled for the time since the last look (capped), minus what departures read.
  if (now_ns > last_ns_) {
    tokens_ =
        std::min(token_cap_, tokens_ + static_cast<double>(now_ns - last_ns_) * tokens_per_ns_);
    last_ns_ = now_ns;
  }
  const uint64_t dequeued = dequeued_cells_.load(std::memory_order_relaxed);
  tokens_ -= static_cast<double>(dequeued - dequeued_seen_);
  dequeued_seen_ = dequeued;
  const uint32_t n = exact.layout().num_queues();
  for (uint32_t k = 0; k < kMaxPerArrival && tokens_ > 0; ++k) {
    const uint32_t q = next_victim(exact);
    if (q >= n) break;
    tokens_ -= drop_head(ctx, q);  // 0 if its egress took the last frame meanwhile
    cursor_ = (q + 1) % n;
  }
}

uint32_t OccamyPolicy::threshold_cells(uint32_t, uint8_t class_id,
                                       const BufferView& view) const noexcept {
  return dt_threshold_cells(alphas_[class_id], view);
}

nlohmann::json OccamyPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  d["state"]["reclaim_tokens_per_us"] = tokens_per_ns_ * 1000;
  d["state"]["token_cap_cells"] = token_cap_;
  return d;
}

}  // namespace sharebuf::policies

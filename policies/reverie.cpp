#include "policies/reverie.h"

#include <algorithm>
#include <cmath>

namespace sharebuf::policies {
namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

ReveriePolicy::ReveriePolicy(const Params& params, const PolicyEnv& env)
    : ReveriePolicy(ParamReader(kName, params, kParams), env) {}

ReveriePolicy::ReveriePolicy(const ParamReader& reader, const PolicyEnv& env)
    : Policy(env),
      alpha_(reader.number("alpha")),
      first_rtt_alpha_(reader.number("first_rtt_alpha")),
      gamma_(reader.number("gamma")),
      // The authors count bytes; sharebuf's unit is the cell, so the indicator is converted.
      congestion_cells_(static_cast<double>(reader.integer("congestion_bytes")) /
                        env.layout->cell_bytes()),
      alphas_(resolve_alphas(env, alpha_)),
      first_rtt_(reader) {
  const BufferLayout& layout = *env.layout;
  uint32_t max_index = 1;
  for (uint32_t p = 0; p < layout.num_ports(); ++p)
    max_index = std::max(max_index, layout.queues_on_port(p));
  lpf_ = std::make_unique<std::atomic<double>[]>(layout.num_queues());
  sat_ = std::make_unique<std::atomic<int64_t>[]>(layout.num_queues());
  nsum_ = std::make_unique<std::atomic<int64_t>[]>(max_index);
  set_params(reader.values());
}

double ReveriePolicy::congested(uint32_t queue) const noexcept {
  const double n = static_cast<double>(nsum_[index_of(queue)].load(kRelaxed)) / kSatOne;
  return std::max(1.0, n);
}

Verdict ReveriePolicy::admit(const ArrivalContext& ctx, const BufferView& view) noexcept {
  const double lpf = lpf_[ctx.queue].load(kRelaxed);
  // SwitchMmu::setCongested, as ReverieThreshold calls it for the arriving queue.
  const auto sat = static_cast<int64_t>(std::min(1.0, lpf / congestion_cells_) * kSatOne);
  // Read first: a queue's saturation rarely changes between its arrivals, and an unconditional
  // exchange would write the line on every frame. The exchange keeps N exact when it does change.
  if (sat_[ctx.queue].load(kRelaxed) != sat) {
    const int64_t old = sat_[ctx.queue].exchange(sat, kRelaxed);
    nsum_[index_of(ctx.queue)].fetch_add(sat - old, kRelaxed);
  }

  if (ctx.cells > view.remaining_cells()) return Verdict::drop(DropReason::kPoolFull);
  const double alpha = first_rtt_(ctx) ? first_rtt_alpha_ : alphas_[ctx.class_id];
  const double threshold = alpha * view.remaining_cells() / congested(ctx.queue);
  return lpf + ctx.cells <= threshold ? Verdict::accept() : Verdict::drop(DropReason::kThreshold);
}

void ReveriePolicy::on_install(const BufferView& view) noexcept {
  // A policy installed on a busy switch takes today's lengths as their filtered past; on an empty
  // buffer (every simulation's start, the authors' too) that is 0.
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q)
    lpf_[q].store(view.queue_cells(q), kRelaxed);
}

void ReveriePolicy::on_dequeue(const DequeueEvent& ev, const BufferView& view) noexcept {
  const double q = view.queue_cells(ev.queue);
  const double lpf = gamma_ * lpf_[ev.queue].load(kRelaxed) + (1.0 - gamma_) * q;
  lpf_[ev.queue].store(std::min(lpf, q), kRelaxed);
}

uint32_t ReveriePolicy::threshold_cells(uint32_t queue, uint8_t class_id,
                                        const BufferView& view) const noexcept {
  // The limit the filtered length meets (not the queue's own length).
  const double t = std::floor(alphas_[class_id] * view.remaining_cells() / congested(queue));
  return static_cast<uint32_t>(std::min<double>(t, view.capacity_cells()));
}

nlohmann::json ReveriePolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json filtered = nlohmann::json::array();
  for (uint32_t q = 0; q < view.layout().num_queues(); ++q)
    filtered.push_back(std::round(filtered_cells(q) * 100) / 100);
  d["state"]["filtered_cells"] = filtered;
  return d;
}

}  // namespace sharebuf::policies

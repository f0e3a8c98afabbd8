#include "datapath/switch_core.h"

#include <time.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/overflow_step.h"
#include "policies/registry.h"

namespace sharebuf::datapath {

SwitchCore::SwitchCore(const model::SwitchConfig& cfg)
    : config(cfg),
      buffer(model::buffer_config(cfg)),
      env(model::policy_env(cfg, buffer.layout())),
      epochs(static_cast<uint32_t>(cfg.ports.size()) + model::rx_workers(cfg) + 1),
      macs(cfg.mac_table_size, cfg.mac_ageing_ns),
      classifier(cfg),
      trim(cfg),
      tofino(model::rx_workers(cfg), model::meter_line_rates(cfg)) {
  model::configure_tofino(tofino, cfg);
  if (const uint32_t reserve = model::header_reserve_cells(cfg);
      reserve != 0 && !buffer.state().set_header_reserve(reserve)) {
    throw std::invalid_argument("[trimming] header_reserve: " + std::to_string(reserve) +
                                " cells on each of " + std::to_string(cfg.ports.size()) +
                                " ports do not fit in a buffer of " +
                                std::to_string(buffer.layout().capacity_cells()) + " cells");
  }
  policy_owner = policies::make_policy(cfg.policy, cfg.policy_params, env);
  policy_owner->on_install(buffer.exact_view());
  buffer.set_policy_uses_probes(policy_owner->uses_probes(), monotonic_ns());
  policy.store(policy_owner.get(), std::memory_order_release);
  for (const model::PortConfig& p : cfg.ports) {
    ports.push_back(std::make_unique<PortRuntime>(p));
    ports.back()->line_rate_bps.store(p.rate_bps, std::memory_order_relaxed);
  }
  for (const model::StaticMacConfig& m : cfg.static_macs)
    macs.add_static(m.mac, m.port);
}

void SwitchCore::install_policy(std::unique_ptr<policies::Policy> next) {
  next->on_install(buffer.view(monotonic_ns()));
  buffer.set_policy_uses_probes(next->uses_probes(), monotonic_ns());
  policy.store(next.get(), std::memory_order_seq_cst);
  retired_policies_.push_back({std::move(policy_owner), epochs.advance()});
  policy_owner = std::move(next);
  reclaim();
}

void SwitchCore::start_capture(std::unique_ptr<FrameCapture> next) {
  capture.store(next.get(), std::memory_order_seq_cst);
  if (capture_owner_) retired_captures_.push_back({std::move(capture_owner_), epochs.advance()});
  capture_owner_ = std::move(next);
}

FrameCapture* SwitchCore::stop_capture() {
  FrameCapture* cap = capture.exchange(nullptr, std::memory_order_seq_cst);
  if (cap == nullptr) return nullptr;
  retired_captures_.push_back({std::move(capture_owner_), epochs.advance()});
  return cap;
}

size_t SwitchCore::reclaim() {
  auto sweep = [this](auto& retired) {
    for (size_t i = 0; i < retired.size();) {
      if (epochs.passed(retired[i].epoch)) {
        retired[i] = std::move(retired.back());
        retired.pop_back();
        ++reclaimed_;
      } else {
        ++i;
      }
    }
  };
  sweep(retired_policies_);
  sweep(retired_captures_);
  return retired_pending();
}

// Shaper depth when idle: two full frames, or 500 us at the port rate, whichever is larger, so an
// idle port does not burst much. While backlogged: up to 20 ms at the rate, because on a loaded
// 2-core host the egress thread wakes milliseconds late, and a plain bucket then forfeits the
// credit: a 100 Mbit/s port sent 70-84 Mbit/s beside two CPU-bound processes.
void PortRuntime::apply_rate(uint64_t rate_bps, uint32_t mtu) noexcept {
  const uint64_t max_frame = mtu + 64;
  const uint64_t bytes_per_ms = rate_bps / 8 / 1000;
  shaper.set_rate(rate_bps, std::max<uint64_t>(2 * max_frame, bytes_per_ms / 2),
                  std::max<uint64_t>(2 * max_frame, 20 * bytes_per_ms));
  clock.set_rate(rate_bps, shaper.catchup_ns());
}

}  // namespace sharebuf::datapath

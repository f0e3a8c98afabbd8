#include "datapath/switch_core.h"

#include <time.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sharebuf::datapath {

SwitchCore::SwitchCore(const model::SwitchConfig& cfg)
    : switch_model(cfg, {.now_ns = monotonic_ns()}),
      epochs(static_cast<uint32_t>(cfg.ports.size()) + model::rx_workers(cfg) + 1) {
  for (const model::PortConfig& p : cfg.ports) {
    ports.push_back(std::make_unique<PortRuntime>(p));
    ports.back()->line_rate_bps.store(p.rate_bps, std::memory_order_relaxed);
  }
}

void SwitchCore::install_policy(std::unique_ptr<policies::Policy> next) {
  retired_policies_.push_back(
      {switch_model.install_policy(std::move(next), monotonic_ns()), epochs.advance()});
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
void SwitchCore::apply_rate(uint32_t p, uint64_t rate_bps, uint32_t mtu) noexcept {
  model::DepartureClock& clock = switch_model.port(p).clock;
  model::TokenBucket& shaper = ports[p]->shaper;
  const uint64_t max_frame = mtu + 64;
  const uint64_t bytes_per_ms = rate_bps / 8 / 1000;
  shaper.set_rate(rate_bps, std::max<uint64_t>(2 * max_frame, bytes_per_ms / 2),
                  std::max<uint64_t>(2 * max_frame, 20 * bytes_per_ms));
  clock.set_rate(rate_bps, shaper.catchup_ns());
}

}  // namespace sharebuf::datapath

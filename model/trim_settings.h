// TrimSettings: trimming's configuration as the RX workers read it, which the control thread may
// change while they run (SwitchControl::set_trimming, the control socket's trim.set). Every
// field is an atomic read with relaxed order once per refused frame, so a frame sees each field
// either before or after a change; fields changed together may be seen one before the other for
// a frame or two, which is harmless: each value on its own is a valid setting.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "model/switch_config.h"

namespace sharebuf::model {

struct TrimSettings {
  explicit TrimSettings(const SwitchConfig& cfg)
      : overflow(std::make_unique<std::atomic<uint8_t>[]>(cfg.classes.size())),
        return_threshold(std::make_unique<std::atomic<uint32_t>[]>(cfg.classes.size())),
        trim_queue(std::make_unique<std::atomic<uint32_t>[]>(cfg.ports.size())),
        dscp_toward(std::make_unique<std::atomic<int>[]>(cfg.ports.size())) {
    size.store(cfg.trim.size);
    fix_lengths.store(cfg.trim.fix_lengths);
    dscp.store(cfg.trim.dscp);
    return_dscp.store(cfg.trim.return_dscp);
    tofino_approx.store(cfg.trim.tofino_approx);
    trim_newest_p16.store(probability_p16(cfg.trim.trim_newest));
    for (size_t c = 0; c < cfg.classes.size(); ++c) {
      overflow[c].store(static_cast<uint8_t>(cfg.classes[c].overflow));
      return_threshold[c].store(cfg.classes[c].return_threshold_cells);
    }
    for (size_t p = 0; p < cfg.ports.size(); ++p) {
      trim_queue[p].store(cfg.ports[p].trim_queue);
      dscp_toward[p].store(cfg.ports[p].trim_dscp_toward);
    }
  }

  OverflowAction overflow_of(uint8_t class_id) const noexcept {
    return static_cast<OverflowAction>(overflow[class_id].load(std::memory_order_relaxed));
  }

  std::atomic<uint32_t> size{128};
  std::atomic<bool> fix_lengths{true};
  std::atomic<int> dscp{-1};
  std::atomic<int> return_dscp{-1};
  std::atomic<bool> tofino_approx{false};  // mode: "tofino-approx" (true) or "ideal"
  // trim_newest as a probability in 1/65536 (0: off).
  std::atomic<uint32_t> trim_newest_p16{0};
  static uint32_t probability_p16(double p) noexcept {
    return static_cast<uint32_t>(p * 65536.0 + 0.5);
  }
  std::unique_ptr<std::atomic<uint8_t>[]> overflow;           // per class: OverflowAction
  std::unique_ptr<std::atomic<uint32_t>[]> return_threshold;  // per class, cells
  std::unique_ptr<std::atomic<uint32_t>[]> trim_queue;        // per port: queue index
  std::unique_ptr<std::atomic<int>[]> dscp_toward;            // per port
};

}  // namespace sharebuf::model

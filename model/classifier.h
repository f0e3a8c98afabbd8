// Classifier: maps a parsed frame to its traffic class by DSCP, by 802.1p PCP, or by 5-tuple
// rules (first match wins), falling back to the ingress port's default class. Tables are built
// once; classify() is a table lookup (dscp/pcp) or a short linear scan (rules).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/frame_parser.h"
#include "model/switch_config.h"

namespace sharebuf::model {

class Classifier {
 public:
  explicit Classifier(const SwitchConfig& config);

  uint8_t classify(const ParsedFrame& frame, uint16_t in_port) const noexcept;
  uint32_t queue_of(uint8_t class_id) const noexcept { return class_queue_[class_id]; }
  uint32_t ecn_threshold_cells(uint8_t class_id) const noexcept { return class_ecn_k_[class_id]; }

 private:
  static constexpr uint8_t kUnset = 0xff;
  ClassifyMode mode_;
  std::array<uint8_t, 64> by_dscp_;
  std::array<uint8_t, 8> by_pcp_;
  std::vector<RuleConfig> rules_;
  std::vector<uint8_t> port_default_;
  std::array<uint32_t, 256> class_queue_{};
  std::array<uint32_t, 256> class_ecn_k_{};
};

}  // namespace sharebuf::model

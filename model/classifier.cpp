#include "model/classifier.h"

namespace sharebuf::model {
namespace {

bool prefix_match(uint32_t addr, uint32_t want, uint8_t prefix) noexcept {
  if (prefix == 0) return true;
  const uint32_t mask = prefix >= 32 ? ~0u : ~((1u << (32 - prefix)) - 1);
  return (addr & mask) == (want & mask);
}

}  // namespace

Classifier::Classifier(const SwitchConfig& config) : mode_(config.classify), rules_(config.rules) {
  by_dscp_.fill(kUnset);
  by_pcp_.fill(kUnset);
  for (size_t c = 0; c < config.classes.size() && c < 256; ++c) {
    const ClassConfig& cls = config.classes[c];
    for (uint8_t d : cls.dscp)
      by_dscp_[d & 63] = static_cast<uint8_t>(c);
    for (uint8_t p : cls.pcp)
      by_pcp_[p & 7] = static_cast<uint8_t>(c);
    class_queue_[c] = cls.queue;
    class_ecn_k_[c] = cls.ecn_threshold_cells;
  }
  for (const PortConfig& p : config.ports)
    port_default_.push_back(p.default_class);
}

uint8_t Classifier::classify(const ParsedFrame& f, uint16_t in_port) const noexcept {
  uint8_t c = kUnset;
  switch (mode_) {
    case ClassifyMode::kDscp:
      if (f.ip_version != 0) c = by_dscp_[f.dscp];
      break;
    case ClassifyMode::kPcp:
      if (f.has_vlan) c = by_pcp_[f.pcp];
      break;
    case ClassifyMode::kRules:
      for (const RuleConfig& r : rules_) {
        if (r.proto && (f.ip_version == 0 || *r.proto != f.l4_proto)) continue;
        if ((r.src_ip || r.dst_ip) && f.ip_version != 4) continue;
        if (r.src_ip && !prefix_match(f.src_ip4, *r.src_ip, r.src_prefix)) continue;
        if (r.dst_ip && !prefix_match(f.dst_ip4, *r.dst_ip, r.dst_prefix)) continue;
        if ((r.src_port || r.dst_port) && f.l4_offset == 0) continue;
        if (r.src_port && *r.src_port != f.src_port) continue;
        if (r.dst_port && *r.dst_port != f.dst_port) continue;
        c = r.class_id;
        break;
      }
      break;
  }
  if (c == kUnset) c = in_port < port_default_.size() ? port_default_[in_port] : 0;
  return c;
}

}  // namespace sharebuf::model

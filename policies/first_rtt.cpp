#include "policies/first_rtt.h"

#include <algorithm>

namespace sharebuf::policies {

FirstRtt::FirstRtt(const ParamReader& reader)
    : base_rtt_ns_(reader.number("base_rtt_us") * 1000),
      first_bdp_bytes_(static_cast<uint64_t>(reader.integer("first_bdp_bytes"))),
      flows_(static_cast<uint64_t>(reader.integer("flow_table_size")),
             reader.number("flow_ageing_us") * 1000) {}

bool FirstRtt::seen_first(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes) noexcept {
  if (flow_hash == 0) return false;
  const FlowTable::Seen seen = flows_.observe(flow_hash, now_ns, bytes);
  if (first_bdp_bytes_ != 0) return seen.bytes_before < first_bdp_bytes_;
  return static_cast<double>(now_ns - std::min(now_ns, seen.first_ns)) < base_rtt_ns_;
}

}  // namespace sharebuf::policies

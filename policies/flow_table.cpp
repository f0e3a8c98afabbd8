#include "policies/flow_table.h"

#include <algorithm>

namespace sharebuf::policies {

FlowTable::FlowTable(uint64_t size, double ageing_ns) : ageing_ns_(ageing_ns) {
  while (size_ < size)
    size_ <<= 1;
  entries_ = std::make_unique<Entry[]>(size_);
}

FlowTable::Seen FlowTable::observe(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes) noexcept {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  Entry* set = &entries_[(flow_hash & (size_ / kWays - 1)) * kWays];
  // The flow's way, or else the way seen least recently (an empty way is never seen: 0).
  Entry* e = &set[0];
  for (uint32_t w = 0; w < kWays; ++w) {
    if (set[w].key.load(kRelaxed) == flow_hash) {
      e = &set[w];
      break;
    }
    if (set[w].last_ns.load(kRelaxed) < e->last_ns.load(kRelaxed)) e = &set[w];
  }
  const bool known =
      e->key.load(kRelaxed) == flow_hash &&
      static_cast<double>(now_ns - std::min(now_ns, e->last_ns.load(kRelaxed))) <= ageing_ns_;
  if (!known) {
    e->key.store(flow_hash, kRelaxed);
    e->first_ns.store(now_ns, kRelaxed);
    e->bytes.store(0, kRelaxed);
  }
  e->last_ns.store(now_ns, kRelaxed);
  return Seen{e->first_ns.load(kRelaxed), e->bytes.fetch_add(bytes, kRelaxed)};
}

}  // namespace sharebuf::policies

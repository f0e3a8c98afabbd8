#include "policies/smartbuf_map.h"

#include <algorithm>

namespace sharebuf::policies {

SmartbufMap::SmartbufMap(size_t capacity, uint64_t ttl_ns)
    : capacity_(std::max<size_t>(capacity, 1)), ttl_ns_(ttl_ns) {
  entries_.reserve(capacity_);
}

void SmartbufMap::insert(double gradient, uint32_t max_cells, uint64_t now_ns) {
  const auto by_key = [](const Entry& e, double g) { return e.gradient < g; };
  auto it = std::lower_bound(entries_.begin(), entries_.end(), gradient, by_key);
  if (it != entries_.end() && it->gradient == gradient) {
    it->max_cells = std::max(it->max_cells, max_cells);
    it->learned_ns = now_ns;
    return;
  }
  if (entries_.size() == capacity_) {
    const auto oldest = std::min_element(
        entries_.begin(), entries_.end(),
        [](const Entry& a, const Entry& b) { return a.learned_ns < b.learned_ns; });
    entries_.erase(oldest);
    it = std::lower_bound(entries_.begin(), entries_.end(), gradient, by_key);
  }
  entries_.insert(it, Entry{gradient, max_cells, now_ns});
  oldest_ns_ = std::min(oldest_ns_, now_ns);
}

std::optional<double> SmartbufMap::mean_of_nearest_larger(double gradient, size_t k) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), gradient,
                             [](const Entry& e, double g) { return e.gradient < g; });
  size_t n = 0;
  double sum = 0;
  for (; it != entries_.end() && n < k; ++it, ++n)
    sum += it->max_cells;
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

void SmartbufMap::expire(uint64_t now_ns) {
  if (entries_.empty() || now_ns < oldest_ns_ || now_ns - oldest_ns_ <= ttl_ns_) return;
  std::erase_if(entries_, [&](const Entry& e) {
    return e.learned_ns < now_ns && now_ns - e.learned_ns > ttl_ns_;
  });
  oldest_ns_ = UINT64_MAX;
  for (const Entry& e : entries_)
    oldest_ns_ = std::min(oldest_ns_, e.learned_ns);
}

}  // namespace sharebuf::policies

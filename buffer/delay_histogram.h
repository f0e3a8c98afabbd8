// DelayHistogram: queueing delays (arrival to transmission, ns) of one queue in log-linear
// buckets — four per power of two, so a quantile is known within about 12 % of its value at any
// scale from 1 ns to minutes, in 2.5 KB and one relaxed increment per frame.
//
// Thread-safety: record() by the queue's port's egress owner (one at a time); readers anywhere.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

namespace sharebuf::buffer {

class DelayHistogram {
 public:
  static constexpr int kSubBits = 2;  // 4 buckets per power of two
  static constexpr int kBuckets = (64 - kSubBits + 1) << kSubBits;

  static int bucket_of(uint64_t ns) noexcept {
    if (ns < (1u << kSubBits)) return static_cast<int>(ns);
    const int log = 63 - std::countl_zero(ns);
    const auto sub = static_cast<int>((ns >> (log - kSubBits)) & ((1u << kSubBits) - 1));
    return ((log - kSubBits + 1) << kSubBits) + sub;
  }
  // The smallest value of bucket b.
  static uint64_t lower_bound(int b) noexcept {
    if (b < (1 << kSubBits)) return static_cast<uint64_t>(b);
    const int log = (b >> kSubBits) + kSubBits - 1;
    const uint64_t sub = static_cast<uint64_t>(b & ((1 << kSubBits) - 1));
    return (uint64_t{1} << log) + (sub << (log - kSubBits));
  }

  void record(uint64_t ns) noexcept {
    counts_[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t count_in(int bucket) const noexcept {
    return counts_[bucket].load(std::memory_order_relaxed);
  }
  uint64_t count() const noexcept {
    uint64_t n = 0;
    for (const auto& c : counts_)
      n += c.load(std::memory_order_relaxed);
    return n;
  }
  // The q-quantile (0..1) in ns: the middle of the bucket that holds it; 0 when empty.
  uint64_t quantile(double q) const noexcept {
    const uint64_t n = count();
    if (n == 0) return 0;
    const auto rank = static_cast<uint64_t>(q * static_cast<double>(n - 1)) + 1;
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += counts_[b].load(std::memory_order_relaxed);
      if (seen >= rank) {
        const uint64_t lo = lower_bound(b);
        const uint64_t hi = b + 1 < kBuckets ? lower_bound(b + 1) : lo;
        return lo + (hi - lo) / 2;
      }
    }
    return lower_bound(kBuckets - 1);
  }
  void reset() noexcept {
    for (auto& c : counts_)
      c.store(0, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> counts_[kBuckets] = {};
};

}  // namespace sharebuf::buffer

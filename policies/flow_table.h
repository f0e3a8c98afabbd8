// FlowTable: the flows a policy has seen lately, by the datapath's flow hash (5-tuple), for
// policies that treat a flow's first bytes differently (ABM's first round trip, FAB's short
// flows). A small 4-way set-associative table: an entry unused for `ageing_ns` is a new flow
// again, and a flow that finds its set full replaces the way seen least recently (that flow then
// counts as new when it comes back: a small table errs towards treating flows as new). Four
// ways, not one: in a direct-mapped table two long flows sharing a slot evict each other on every
// frame, so each is new at every turn (seen live with ABM: a saturating UDP queue held at 2000
// cells grew to 5900 once a TCP flow shared its slot).
//
// Thread-safety: relaxed atomics updated by whichever RX worker sees the flow; concurrent first
// packets of one flow may both claim it, harmlessly.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace sharebuf::policies {

class FlowTable {
 public:
  // `size` entries, rounded up to a power of two (at least 16); 32 bytes each.
  FlowTable(uint64_t size, double ageing_ns);

  struct Seen {
    uint64_t first_ns = 0;      // when the flow (re)started: now, for a new flow
    uint64_t bytes_before = 0;  // its bytes since then, before this frame
  };
  // Records a frame of `bytes` of the flow `flow_hash` (not 0) arriving at `now_ns`.
  Seen observe(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes) noexcept;

  uint32_t size() const noexcept { return size_; }

 private:
  struct Entry {
    std::atomic<uint32_t> key{0};
    std::atomic<uint64_t> first_ns{0};
    std::atomic<uint64_t> last_ns{0};
    std::atomic<uint64_t> bytes{0};  // seen since first_ns
  };
  static constexpr uint32_t kWays = 4;

  uint32_t size_ = 16;
  double ageing_ns_;
  std::unique_ptr<Entry[]> entries_;
};

}  // namespace sharebuf::policies

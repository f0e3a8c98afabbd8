// FirstRtt: which frames belong to a flow's first round trip, for the policies that give those
// a large alpha (ABM, Reverie). Which frames those are:
// - where the sender says so (ArrivalContext::first_bdp: ns-3's senders tag their first
//   bandwidth-delay product, as the ABM, Reverie and Credence authors' simulations do; a replay
//   carries the recorded tag), the sender's answer;
// - otherwise (the live switch: Linux senders say nothing) the switch's own view of the flow:
//   its first `first_bdp_bytes` bytes when that is set (the switch counts them; it differs from
//   the sender's count by retransmissions only), else the frames of its first `base_rtt_us` after
//   its first frame. The time window starts at the SYN, so it must cover the handshake's round
//   trip and the first window's serialisation to reach any data at all.
// Flows are tracked in a FlowTable (policies/flow_table.h; an entry unused for `flow_ageing_us`
// is a new flow again). Frames without a flow hash are never first-RTT.
#pragma once

#include <array>
#include <cstddef>

#include "policies/flow_table.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

class FirstRtt {
 public:
  static constexpr std::array<ParamSpec, 4> kParams{{
      {"base_rtt_us", ParamType::kNumber, "10",
       "untagged frames: a flow is in its first RTT this long after its first frame", 0.001, 1e6},
      {"first_bdp_bytes", ParamType::kInteger, "0",
       "untagged frames: a flow's first RTT is its first this many bytes (0: base_rtt_us decides)",
       0, 1ll << 40},
      {"flow_ageing_us", ParamType::kNumber, "1000", "a flow unseen this long is new again", 0.001,
       1e9},
      {"flow_table_size", ParamType::kInteger, "4096",
       "flow table entries (4 ways a set; rounded up to a power of two)", 16, 1 << 20},
  }};

  explicit FirstRtt(const ParamReader& reader);

  // Whether the arriving frame belongs to its flow's first RTT (the sender's tag if any, else the
  // flow table's view, which then records the frame).
  bool operator()(const ArrivalContext& ctx) noexcept {
    return ctx.first_bdp == FirstBdp::kUnknown ? seen_first(ctx.flow_hash, ctx.now_ns, ctx.bytes)
                                               : ctx.first_bdp == FirstBdp::kYes;
  }
  // The flow table's view of a frame of `bytes` of this flow arriving now (records the flow).
  bool seen_first(uint32_t flow_hash, uint64_t now_ns, uint32_t bytes) noexcept;

 private:
  double base_rtt_ns_;
  uint64_t first_bdp_bytes_;
  FlowTable flows_;
};

// A policy's own parameters followed by FirstRtt's, as one kParams table.
template <size_t N, size_t M>
constexpr std::array<ParamSpec, N + M> join_params(const std::array<ParamSpec, N>& own,
                                                   const std::array<ParamSpec, M>& shared) {
  std::array<ParamSpec, N + M> out{};
  for (size_t i = 0; i < N; ++i)
    out[i] = own[i];
  for (size_t i = 0; i < M; ++i)
    out[N + i] = shared[i];
  return out;
}

}  // namespace sharebuf::policies

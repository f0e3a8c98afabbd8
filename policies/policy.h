// Policy: the admission interface every buffer-sharing scheme implements (DPDK rte_red's shape:
// read-only configuration, runtime state of its own, inputs passed in by the caller).
//
// A policy owns no clock and reads no queue itself: the caller passes the arrival time and a
// BufferView (exact or probe), which makes every policy table-testable. Occupancy lives in
// BufferState, never in a policy, so a live switch loses nothing.
//
// Hot path contract for admit(): no allocation, no locks where an atomic suffices, no logging, no
// exceptions; one virtual call per frame. on_enqueue()/on_dequeue() carry the bookkeeping that the
// papers put in the egress pipeline (gradients, learning, rates, Credence thresholds).
//
// Thread-safety: admit() and on_enqueue() run concurrently on every RX worker; on_dequeue() on
// every egress worker; describe()/params() on the control thread. A policy with mutable state
// documents how it shares it. Policies are built and validated off the hot path and published
// with an atomic pointer swap; a live policy is never reconfigured in place.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "buffer/buffer_layout.h"
#include "buffer/buffer_view.h"
#include "policies/verdict.h"

namespace sharebuf::policies {

using buffer::BufferLayout;
using buffer::BufferView;
using buffer::PriorityGroup;

// Protean's classification of traffic (Protean paper, Algorithm 1).
enum class ProteanRole : uint8_t { kShort, kLong, kIncast };
std::string_view to_string(ProteanRole r) noexcept;

// A traffic class as the datapath configures it. `alpha` unset means "the policy's default".
struct TrafficClass {
  std::string name = "default";
  std::optional<double> alpha;
  PriorityGroup group = PriorityGroup::kLow;
  ProteanRole role = ProteanRole::kIncast;
};

// How a port shares its rate among its queues (FB's gamma "share").
enum class SchedulingKind : uint8_t { kRoundRobin, kDrr, kStrictPriority };
struct PortScheduling {
  SchedulingKind kind = SchedulingKind::kRoundRobin;
  std::vector<uint32_t> weights;  // DRR: one per queue; empty = all equal
};

// What a policy may know about the switch it runs in, fixed at construction.
struct PolicyEnv {
  const BufferLayout* layout = nullptr;
  std::vector<TrafficClass> classes;    // by class id; empty = one default class
  std::vector<uint64_t> port_rate_bps;  // shaped ("line") rate per port; empty/0 = unknown
  std::vector<uint8_t> queue_class;     // class shown for each queue in telemetry; empty = 0
  std::vector<PortScheduling> port_scheduling;  // per port; empty = round robin everywhere
  // Replay only: for each arrival (by ArrivalContext::seq), 1 if LQD dropped or pushed it out in
  // a replay of the same arrivals. Credence's `perfect` oracle answers from it.
  std::shared_ptr<const std::vector<uint8_t>> oracle_labels;

  size_t num_classes() const noexcept { return classes.empty() ? 1 : classes.size(); }
  uint8_t class_of_queue(uint32_t q) const noexcept {
    return q < queue_class.size() ? queue_class[q] : 0;
  }
  PriorityGroup group_of_class(uint8_t c) const noexcept {
    return c < classes.size() ? classes[c].group : PriorityGroup::kLow;
  }
  ProteanRole role_of_class(uint8_t c) const noexcept {
    return c < classes.size() ? classes[c].role : ProteanRole::kIncast;
  }
  // The shaped rate of port p in cells per second; unshaped or unknown ports count as 10 Gbit/s.
  double rate_cells_per_s(uint32_t p) const noexcept {
    const double bps = p < port_rate_bps.size() && port_rate_bps[p] != 0
                           ? static_cast<double>(port_rate_bps[p])
                           : 10e9;
    return bps / 8.0 / layout->cell_bytes();
  }
};

// Whether a frame carries its flow's first bandwidth-delay product of bytes, where the sender
// says so: ns-3's senders tag those segments (as the ABM and Credence authors' simulations do)
// and a replay carries the answer recorded there. kUnknown (the live switch: Linux senders say
// nothing) leaves the policy to judge from what it sees (ABM's flow table).
enum class FirstBdp : uint8_t { kUnknown, kNo, kYes };

struct ArrivalContext {
  uint64_t now_ns = 0;
  uint32_t queue = 0;  // flat queue id
  uint16_t port = 0;   // egress port of `queue`
  uint8_t class_id = 0;
  uint16_t in_port = 0;  // the port it arrived on (its ingress pipeline, for Credence's)
  uint32_t cells = 0;
  uint32_t bytes = 0;
  uint32_t flow_hash = 0;  // hash of the frame's flow (5-tuple where known); 0 = unknown
  uint64_t seq = 0;        // the arrival's index in a replay (0 in the live switch)
  FirstBdp first_bdp = FirstBdp::kUnknown;
};

struct DequeueEvent {
  uint64_t now_ns = 0;
  uint32_t queue = 0;
  uint16_t port = 0;
  uint8_t class_id = 0;
  uint16_t in_port = 0;  // the port the frame arrived on
  uint32_t cells = 0;
  uint32_t bytes = 0;
  uint64_t sojourn_ns = 0;
};

class Policy {
 public:
  virtual ~Policy() = default;

  virtual std::string_view name() const noexcept = 0;
  virtual Verdict admit(const ArrivalContext& ctx, const BufferView& view) noexcept = 0;
  // Called once when the policy becomes active on a buffer that may already hold frames (a live
  // switch), before any admit(). Policies with state derived from occupancy initialise it here.
  virtual void on_install(const BufferView& /*view*/) noexcept {}
  virtual void on_enqueue(const ArrivalContext& /*ctx*/, const BufferView& /*view*/) noexcept {}
  virtual void on_dequeue(const DequeueEvent& /*ev*/, const BufferView& /*view*/) noexcept {}
  // An RX worker brackets each burst it reads from a ring with these. Between them that thread
  // calls only admit() and on_enqueue() on this policy, so a policy whose decisions share one
  // lock may take it once per burst instead of once per frame (Credence): two RX threads then
  // trade its state's cache lines once per burst. Calls without a bracket (the replay, tests)
  // stay correct.
  virtual void begin_burst() noexcept {}
  virtual void end_burst() noexcept {}
  // Policies that learn from probe packets instead of departures (Protean's and Smartbuf's
  // `sync = "probe"`, as their Tofino programs do) say so here; they then get each probe
  // snapshot as it reaches ingress: the registers egress saw at `boundary_ns`. A snapshot taken
  // after quiet intervals stands for every boundary since the previous one (the queues did not
  // change in between; buffer/probe_registers.h). Called on an RX worker, one at a time.
  virtual bool uses_probes() const noexcept { return false; }
  virtual void on_probe(const BufferView& /*registers*/, uint64_t /*boundary_ns*/,
                        uint64_t /*interval_ns*/) noexcept {}

  // A policy whose admit() returns kPushOut names here how the next victim queue is chosen, given
  // the arriving frame's queue, every queue's planned length and whether it still holds a frame
  // (SharedBuffer::make_room plans with it). Policies that never push out have none: a kPushOut
  // from them is refused as unsupported.
  using VictimPicker = uint32_t (*)(uint32_t queue, std::span<const uint32_t> lengths,
                                    std::span<const uint8_t> has_frame) noexcept;
  virtual VictimPicker victim_picker() const noexcept { return nullptr; }

  // Reclaim (Occamy): a policy that frees buffer by dropping admitted frames from the head of
  // queues says so (set_reclaims() in its constructor) and gets reclaim() before each admission
  // decision, at the arrival's time, with the buffer's exact occupancy (the traffic manager's own
  // counters, whatever the admission view) and `drop_head(ctx, queue)`: it drops that queue's
  // oldest frame (counted `reclaimed` at the queue; the egress workers cannot send it any more)
  // and returns the cells and bytes freed, 0 if the queue held no frame. Called on every RX worker
  // concurrently, like admit(); the view reflects each drop at once.
  struct HeadDrop {
    uint32_t cells = 0;
    uint32_t bytes = 0;  // the frame's length
  };
  using HeadDropper = HeadDrop (*)(void* ctx, uint32_t queue) noexcept;
  bool reclaims() const noexcept { return reclaims_; }
  virtual void reclaim(uint64_t /*now_ns*/, const BufferView& /*exact*/, HeadDropper /*drop_head*/,
                       void* /*ctx*/) noexcept {}

  // The threshold a frame of `class_id` arriving at `queue` would be held to now, in cells
  // (telemetry and the watch stream).
  virtual uint32_t threshold_cells(uint32_t queue, uint8_t class_id,
                                   const BufferView& view) const noexcept = 0;

  // The effective typed configuration; feeding it back to the registry builds an equal policy.
  // By default what the constructor's ParamReader handed out (set_params).
  virtual nlohmann::json params() const { return params_; }
  // {"name", "params", "state"}: parameters plus the policy's internal state for the control
  // socket. The base version reports every queue's threshold.
  virtual nlohmann::json describe(const BufferView& view) const;

 protected:
  explicit Policy(const PolicyEnv& env) : env_(env) {}
  // Call at the end of the constructor with ParamReader::values().
  void set_params(nlohmann::json values) { params_ = std::move(values); }
  void set_reclaims() noexcept { reclaims_ = true; }
  const PolicyEnv& env() const noexcept { return env_; }

 private:
  PolicyEnv env_;
  nlohmann::json params_ = nlohmann::json::object();
  bool reclaims_ = false;
};

}  // namespace sharebuf::policies

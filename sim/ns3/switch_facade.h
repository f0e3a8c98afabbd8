// SwitchFacade: one sharebuf switch — the switch model every engine runs (model/switch_model.h:
// its SharedBuffer, ingress step with ECN marking, overflow step with trimming, policy,
// classifier, schedulers), built from a sharebufd TOML configuration — behind an interface that
// compiles as C++17, so ns-3 (whose headers do not compile as C++20 with GCC 12) can use the
// C++20 libraries without seeing them. The packets stay with the caller: the buffer holds each
// frame's length (its cells) and the caller's 64-bit handle for it.
//
// Time is the caller's (ns-3's simulated clock, in ns). arrive() runs the admission step at `now`
// (the probe view, when configured, at its boundaries on this clock); next() is the port starting
// a transmission: the scheduler picks the queue, the frame's cells are freed and the policy's
// on_dequeue() hears of it with the time its last bit leaves (start + bytes x 8 / the port's rate),
// as the replay does (sim/replay.h).
//
// Trimming: a class's overflow action runs in the model's overflow step as in the live switch and
// the replay. A cut copy is queued in the shared buffer under a handle of its own, and arrive()
// (or release(), for frames deflected through a recirculation port under mode "tofino-approx")
// names it in Outcome::copies with the handle of the packet it was cut from: the caller makes
// the packet (the original's first `bytes`, its addresses and L4 ports swapped when `returned`)
// and sends it from `port` when next() names the copy's handle. Return-to-sender and the Tofino
// approximation's per-pipeline meters need each arrival's ingress port (Arrival::in_port).
//
// This header includes only the standard library, on purpose.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sharebuf::sim {

class SwitchFacade {
 public:
  // A cut copy the switch queued (trimming): `handle` is its own, `of` the packet it was cut
  // from; it leaves `port` from queue `queue` as `bytes` bytes (frame bytes, as Arrival::bytes),
  // with DSCP `dscp` (-1: the original's), addressed back to the original's sender when
  // `returned` (return-to-sender, NDP's header_full).
  struct Copy {
    uint64_t handle = 0;
    uint64_t of = 0;
    uint32_t port = 0;
    uint32_t queue = 0;
    uint32_t bytes = 0;
    int32_t dscp = -1;
    bool returned = false;
  };
  struct Outcome {
    bool admitted = false;
    uint32_t queue = 0;       // the port's queue the packet was classified to
    bool mark_ce = false;     // the class's ECN threshold is exceeded: mark the packet CE
    std::string drop_reason;  // when not admitted: "threshold", "pool_full", ...
    // Frames taken out of the buffer while this one arrived: pushed out for it (LQD) or reclaimed
    // (Occamy); reason is "pushed_out" or "reclaimed".
    struct Evicted {
      uint64_t handle = 0;
      const char* reason = "";
    };
    std::vector<Evicted> evicted;
    // Cut copies queued for this arrival (of it, or of the frames it pushed out), in the order
    // the switch queued them.
    std::vector<Copy> copies;
    // Refused and deflected into a recirculation port (mode "tofino-approx"): its cut copy comes
    // out of release() later; the caller keeps the packet until then.
    bool deflected = false;
  };
  // A packet for an egress port.
  struct Arrival {
    uint32_t port = 0;
    uint32_t bytes = 0;
    uint8_t dscp = 0;  // classifies it (the configuration's [classify] dscp mode)
    bool ect = false;  // ECN-capable: may be marked
    uint32_t flow_hash = 0;
    // The sender's tag: the packet is (1) or is not (0) in its flow's first bandwidth-delay
    // product; -1: untagged, the policy judges (policies::FirstBdp).
    int8_t first_bdp = -1;
    // The port it came in on (trimming's pipelines, return-to-sender); -1: unknown, which a
    // class whose overflow action is not "drop" refuses (std::logic_error).
    int32_t in_port = -1;
  };
  struct Departure {
    uint64_t handle = 0;
    uint32_t bytes = 0;
    uint32_t queue = 0;  // the port's queue it left
  };

  // A switch described as an ns-3 queue disc's attributes describe it (SharebufQueueDisc):
  // sharebufd's configuration text, overrides of it, and — when the text has no [[ports]] — the
  // node's ports, each made from the text's [ports] table of settings (queues, scheduler,
  // weights, default_class; like sharebuf-sim's [switches.ports]) at its device's rate.
  struct Spec {
    std::string config;  // sharebufd TOML; may be empty (every default: DT, 1 queue a port)
    std::string source;  // names the text in errors
    std::vector<std::string> overrides;         // "key.path=value", applied to the text in order
    std::string override_origin = "attribute";  // names the overrides in errors
    std::vector<uint64_t> port_rates_bps;       // the node's ports, in port order
  };

  // Builds the switch from sharebufd's configuration text ([buffer], [policy], [[classes]],
  // [classify], [[ports]] with rate, queues, scheduler, weights; interface names are labels).
  // Throws std::runtime_error naming source, line and key for a bad configuration, and for a
  // port without a rate (a simulated port needs one).
  static std::unique_ptr<SwitchFacade> from_toml(const std::string& text,
                                                 const std::string& source);
  // The same from a Spec; errors name the source's line or the override.
  static std::unique_ptr<SwitchFacade> from_spec(const Spec& spec);
  virtual ~SwitchFacade() = default;

  virtual uint32_t ports() const = 0;
  virtual uint64_t port_rate_bps(uint32_t port) const = 0;
  virtual std::string policy_name() const = 0;

  // A packet for egress `a.port`, classified by its DSCP (the configuration's [classify] dscp
  // mode; other modes use each port's default class).
  virtual Outcome arrive(const Arrival& a, uint64_t now_ns, uint64_t handle) = 0;
  // The port starts sending: false when its queues are empty.
  virtual bool next(uint32_t port, uint64_t now_ns, Departure* out) = 0;
  // Trimming's Tofino approximation: when the next deflected frame leaves its recirculation
  // port (UINT64_MAX: none), and the cut copies of those that have left by `now_ns` (run it in
  // the instant's departure round, after the departures: the replay's order).
  // `left` (optional) receives the handles of every deflected packet that left, its copy queued
  // or refused at its trim queue: the caller may let their packets go.
  virtual uint64_t next_release_ns() const = 0;
  virtual std::vector<Copy> release(uint64_t now_ns, std::vector<uint64_t>* left = nullptr) = 0;
  // How long the port takes to send `bytes` (at least 1 ns), the time next() assumes.
  virtual uint64_t transmit_ns(uint32_t port, uint32_t bytes) const = 0;

  // Observation.
  virtual uint32_t queues(uint32_t port) const = 0;
  virtual uint32_t queue_cells(uint32_t port, uint32_t k) const = 0;
  virtual uint32_t total_cells() const = 0;
  virtual uint32_t capacity_cells() const = 0;
  virtual uint32_t cell_bytes() const = 0;
  // The threshold the policy applies now to the class last seen in queue k of port.
  virtual uint32_t threshold_cells(uint32_t port, uint32_t k, uint64_t now_ns) const = 0;
  // One queue's counters (packets).
  struct QueueCounters {
    uint64_t received = 0, admitted = 0, transmitted = 0, ecn_marked = 0;
    uint64_t refused = 0;     // dropped on arrival, any reason
    uint64_t pushed_out = 0;  // admitted, then evicted: pushed out (LQD) or reclaimed (Occamy)
  };
  virtual QueueCounters counters(uint32_t port, uint32_t k) const = 0;
  // Per queue: received, admitted, transmitted and drops by reason, as JSON text.
  virtual std::string counters_json() const = 0;

  // Recording, for replaying the same arrivals with sharebuf-replay (sim/replay_inputs.h): every
  // arrival from now on as a CSV row time_ns,port,queue,bytes,class,flow_hash,first_bdp,ect,
  // in_port (first_bdp empty when untagged, in_port when known), and its fate: 1 if it was
  // refused or later pushed out, 0 otherwise (the replay's --fates); every transmission as the
  // replay's --departures writes it (policy,t_ns,queue,arrival_ns,bytes,cut,ce).
  virtual void record() = 0;
  virtual std::string arrivals_csv() const = 0;
  virtual std::string fates_csv(const std::string& label) const = 0;
  virtual std::string departures_csv(const std::string& label) const = 0;
};

}  // namespace sharebuf::sim

// The replay datapath: drives the switch model every engine runs (model/switch_model.h: the same
// buffer, policy, ingress step — queue, ECN decision, arrival context —, overflow step and
// schedulers as the live switch, built from the same SwitchConfig) from a list of arrivals, with a
// simulated clock and simulated line-rate egress per port: a frame leaves its queue (its cells are
// freed) when its transmission starts, and the policy's on_dequeue() hears of it at the time its
// last bit leaves (start + bytes x 8 / rate), the clock the live switch gives each departure; the
// port's scheduler picks the queue. Events are processed one at a time in time order across all
// ports; within one instant departures come before arrivals (the default), or arrivals first
// (ReplayOptions:: arrivals_first, the order of Credence's slotted model and of the ns-3 switch);
// ties among ports go to the lower port (sim/same_instant.h defines that order for both engines).
// Every arrival is admitted through the live switch's own OverflowStep (model/overflow_step.h)
// on the simulated clock, so a class's overflow action — trim, return-to-sender, NDP's
// trim_newest, the Tofino approximation's meters, deflect-on-drop through its emulated
// recirculation ports and notifications — runs as live; a cut copy is the frame's first
// trim_size bytes (replayed frames have no headers) and queues and departs like any frame;
// deflected frames leave their recirculation port as events of their own. An ECN-capable arrival
// is marked (counted ecn_marked) as the live switch marks it.
// Writing a timeline only observes, so it never changes a result. The probe view (and probe-
// synchronised policies) work as in the live switch, on the simulated clock: registers taken at
// every probe-interval boundary, seen by arrivals `probe_delay` later. Deterministic: the same
// arrivals, configuration and seeds give the same bytes out.
//
// Besides the per-queue report it can write an occupancy/threshold timeline (the CSV format of
// `sharebufctl watch --csv`, so tools/plot_watch.py plots both) and, for every arrival, Credence's
// features at arrival next to the arrival's fate: 1 if it was dropped or later pushed out, 0 if
// it was transmitted (or still queued at the end). Under `lqd` those are the labels Credence's
// oracle is trained on, and the `perfect` oracle answers from them.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "buffer/drop_reason.h"
#include "buffer/shared_buffer.h"
#include "model/switch_config.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::sim {

struct ReplayArrival {
  uint64_t time_ns = 0;
  uint32_t queue = 0;  // flat queue id
  uint32_t bytes = 0;
  uint8_t class_id = 0;
  uint32_t flow_hash = 0;
  uint16_t in_port = 0;  // ingress port: a trimming pipeline's, a returned copy's way back
  policies::FirstBdp first_bdp = policies::FirstBdp::kUnknown;  // the sender's tag, if recorded
  bool ect = false;  // ECN-capable: marked CE above its class's ecn_threshold, as live
};

// The switch a replay simulates: `config` with every unshaped port (rate 0) at 10 Gbit/s, the
// rate policies assume for such a port (a simulated port needs a line rate).
model::SwitchConfig replay_config(model::SwitchConfig config);

// A policy to replay: its registry name and parameters, and the label reports use.
struct ReplayPolicy {
  std::string label;
  std::string name;
  policies::Params params;
};

struct ReplayOptions {
  uint64_t end_ns = 0;  // arrivals after it are not replayed; departures run until it
  // Within one instant: arrivals before departures (Credence's slotted model) instead of after.
  bool arrivals_first = false;
  // Timeline: a row per queue every interval (0 = none), written to `timeline`.
  uint64_t timeline_interval_ns = 0;
  std::ostream* timeline = nullptr;
  bool timeline_header = true;
  // Per-arrival features and fate (CSV) to `trace`; base RTT for the features' EWMAs.
  std::ostream* trace = nullptr;
  double feature_base_rtt_ns = 10'000;
  // Every transmission (CSV, kDeparturesHeader): when it started, from which queue, the arrival
  // time of the frame it carries (a cut copy: its original's), its bytes, whether it is a cut copy
  // and whether it carries a CE mark.
  std::ostream* departures = nullptr;
  // Trimming's Tofino approximation: every congestion notification (CSV, kTrimNotesHeader): when
  // it reaches the pipelines (a deflected frame left its recirculation port one latency before)
  // and the egress port it is about.
  std::ostream* trim_notes = nullptr;
  // Fates of the same arrivals under LQD, for Credence's `perfect` oracle.
  std::shared_ptr<const std::vector<uint8_t>> oracle_labels;
};

struct QueueReport {
  uint64_t arrivals = 0;
  uint64_t enqueued = 0;
  uint64_t transmitted = 0;
  uint64_t transmitted_cells = 0;
  uint64_t dropped[buffer::kNumDropReasons] = {};
  uint64_t dropped_cells[buffer::kNumDropReasons] = {};
  uint32_t peak_cells = 0;
  uint32_t final_cells = 0;
  // Trimming: the queue's refused frames sent on as cut copies (trimmed), sent back (bounced),
  // deflected into a recirculation port, or cut in an arrival's place (trimmed_newest); the cut
  // copies refused at this trim queue (trimmed_dropped) and those its header reserve took.
  uint64_t trimmed = 0;
  uint64_t bounced = 0;
  uint64_t deflected = 0;
  uint64_t trimmed_newest = 0;
  uint64_t trimmed_dropped = 0;
  uint64_t header_reserve = 0;
};

struct ReplayResult {
  std::string policy;  // the ReplayPolicy's label
  std::vector<QueueReport> queues;
  uint32_t peak_total_cells = 0;
  uint64_t transmitted = 0;  // frames whose transmission started by end_ns
  uint64_t arrivals = 0;
  uint64_t probe_charged_bytes = 0;  // the ports' rate given to probes ([buffer] probe_bytes)
  std::vector<uint8_t> fates;        // per arrival: 1 dropped or pushed out, 0 otherwise
  std::vector<std::string> accounting_errors;  // empty: every identity held at the end
  nlohmann::json state;   // the policy's describe() at the end (what it learned, its thresholds)
  nlohmann::json params;  // the parameters it ran with, defaults filled in
  // The Tofino approximation's counters per egress port (empty unless trimming is modelled).
  nlohmann::json tofino;
};

// Replays `arrivals` (sorted by time) on the switch `config` describes (every port with a rate:
// replay_config) under `policy` in place of the configuration's, until options.end_ns. Throws
// policies::ConfigError for a bad policy name or parameters, std::invalid_argument for a port
// without a rate.
ReplayResult run_replay(const model::SwitchConfig& config, const ReplayPolicy& policy,
                        const std::vector<ReplayArrival>& arrivals, const ReplayOptions& options);

inline constexpr const char* kDeparturesHeader = "policy,t_ns,queue,arrival_ns,bytes,cut,ce";
inline constexpr const char* kTrimNotesHeader = "policy,t_ns,port";

// The CSV header of the per-arrival trace.
inline constexpr const char* kTraceHeader =
    "seq,time_ns,queue,cells,queue_cells,total_cells,ewma_queue_cells,ewma_total_cells,label";

}  // namespace sharebuf::sim

// The replay datapath: drives the same SharedBuffer, policies and admission step as the live
// switch from a list of arrivals, with a simulated clock and simulated line-rate egress per port
// (round robin among a port's queues; a frame leaves its queue when its transmission starts).
// Deterministic: the same arrivals and configuration give the same result, bit for bit.
//
// This is the first slice of `sharebuf-replay` (DESIGN.md, Replay datapath): built-in scenarios
// and the per-queue report. Trace inputs, timelines and LQD labels come with the replay issue.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffer/drop_reason.h"
#include "buffer/shared_buffer.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::datapath {

struct ReplayArrival {
  uint64_t time_ns = 0;
  uint32_t queue = 0;  // flat queue id
  uint32_t bytes = 0;
  uint8_t class_id = 0;
};

struct ReplaySetup {
  buffer::BufferConfig buffer;
  std::vector<uint64_t> port_rate_bps;  // one per port
  std::vector<policies::TrafficClass> classes;
  std::vector<uint8_t> queue_class;
};

struct QueueReport {
  uint64_t arrivals = 0;
  uint64_t enqueued = 0;
  uint64_t transmitted = 0;
  uint64_t dropped[buffer::kNumDropReasons] = {};
  uint32_t peak_cells = 0;
  uint32_t final_cells = 0;
};

struct ReplayResult {
  std::string policy;
  std::vector<QueueReport> queues;
  uint32_t peak_total_cells = 0;
  std::vector<std::string> accounting_errors;  // empty: every identity held at the end
};

// Replays `arrivals` (sorted by time) under one policy until `end_ns`. Throws
// policies::ConfigError for a bad policy name or parameters.
ReplayResult run_replay(const ReplaySetup& setup, const std::string& policy_name,
                        const policies::Params& params, const std::vector<ReplayArrival>& arrivals,
                        uint64_t end_ns);

}  // namespace sharebuf::datapath

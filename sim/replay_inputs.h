// Inputs of sharebuf-replay besides the built-in scenarios: a switch configuration (the same
// TOML as sharebufd: ports, rates, queues, schedulers, classes, static MACs), a CSV of arrivals,
// and pcap files (e.g. recorded by `sharebufctl capture.start mode=all`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/switch_config.h"
#include "sim/replay.h"

namespace sharebuf::sim {

// CSV with a header line naming the columns time_ns, port, queue, bytes and optionally class,
// in_port, flow_hash, first_bdp and ect (any order): time in ns, egress port by index or
// interface name, queue index on that port, frame bytes, class id or name, ingress port (default
// 0: trimming's pipelines and return-to-sender need it), the frame's 32-bit flow hash (default 0:
// no flow; ABM's flow table keys on it), the sender's first-BDP tag (1, 0, or empty for none: ABM
// then judges by its flow table; sharebuf-sim records both), whether the frame is ECN-capable (1,
// 0 or empty: marked CE above its class's ecn_threshold, as live; default 0). Without a
// class column a frame's class is its queue's: the first
// [[classes]] entry mapped to that queue index, class 0 if none is. Rows are sorted by time
// (stable). Throws std::runtime_error naming the file, line and column of a bad record.
std::vector<ReplayArrival> read_arrivals_csv(const std::string& path,
                                             const model::SwitchConfig& config);

// Where a replay of recorded arrivals ends by default: 10 ms after the last arrival, so queued
// frames drain (saturating: a time near 2^64 ns cannot wrap around and skip arrivals).
uint64_t default_end_ns(const std::vector<ReplayArrival>& arrivals) noexcept;

// A pcap file and, optionally, the port its frames arrived on (for MAC learning).
struct PcapInput {
  std::string path;
  std::optional<uint16_t> in_port;
};
struct PcapReadStats {
  uint64_t frames = 0;
  uint64_t flooded = 0;    // unknown, broadcast or multicast destination: a copy per other port
  uint64_t filtered = 0;   // destination on the ingress port: not replayed (as live)
  uint64_t malformed = 0;  // not parsable as Ethernet/IP: not replayed
};
// Frames from every file, merged by timestamp (time 0 = the first frame), forwarded as the live
// switch forwards them (model::forward_frame): a frame's egress port is its destination MAC's
// [[routes]] entry (an ECMP group's member by flow hash), else its [[static_macs]] entry, else the
// port where that MAC was last seen as a source (files given with @PORT; the MAC table's size and
// ageing are the config's); a frame for a destination on its ingress port is filtered; unknown
// unicast, broadcast and multicast are flooded: one arrival per other port (every port when the
// file's ingress is unknown), in port order. Class and queue come from the config's classifier, ECN
// capability from the IP header. Throws std::runtime_error naming the file and record for a damaged
// file.
std::vector<ReplayArrival> read_arrivals_pcap(const std::vector<PcapInput>& inputs,
                                              const model::SwitchConfig& config,
                                              PcapReadStats& stats);

}  // namespace sharebuf::sim

// Scenario: what sharebuf-sim simulates, read from a TOML file (docs/ns3.md lists every key):
// the topology (a star or a leaf-spine fabric), every switch's sharebufd configuration (buffer,
// policy, classes, classification, per-port queues and scheduler: the same tables sharebufd
// reads, so a policy and its parameters are written once), the transport, the workloads
// (web-search background, incast queries, fixed flows) and the run (duration, seed, sampling).
//
// The file is validated like sharebufd's configuration: a bad value or an unknown key is an
// error naming file, line, column and key. `--set key.path=value` overrides (sharebuf-sim's
// command line) are applied to the parsed file before it is read; their errors name the
// override.
//
// This header includes only the standard library: sharebuf-sim (C++17, ns-3) includes it, and
// the reader (scenario.cpp) is C++20 in the facade's library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sharebuf::sim {

struct ScenarioSwitch {
  std::string name;         // "switch" (star), "leaf0", "spine3"
  std::string role;         // "star", "leaf", "spine"
  std::string config_toml;  // its sharebufd configuration, [[ports]] included (SwitchFacade)
  uint64_t buffer_bytes = 0;
};

struct Scenario {
  std::string source;  // the file
  std::string text;    // the scenario as read, overrides applied (written next to the results)

  // [topology]
  bool leaf_spine = false;
  uint32_t hosts = 0;  // in all
  uint32_t spines = 0, leaves = 0, hosts_per_leaf = 0;
  uint64_t host_rate_bps = 0;    // host <-> switch links
  uint64_t fabric_rate_bps = 0;  // leaf <-> spine links
  uint32_t ecmp_seed = 0;        // mixed into every switch's ECMP hash (another flow placement)
  uint64_t delay_ns = 0;         // every link's one-way propagation delay
  // host_rate x hosts_per_leaf / (fabric_rate x spines) for a fabric, 1 for a star.
  double oversubscription = 1;

  // Switches in node order: the star's one switch, or the leaves then the spines. Port i of a
  // star is host i; a leaf's ports are its hosts, then one uplink per spine; a spine's port j
  // goes to leaf j.
  std::vector<ScenarioSwitch> switches;

  // [transport]
  std::string cc = "dctcp";  // dctcp, cubic, newreno
  // ECN-capable transport (RFC 3168; dctcp needs it): default on for dctcp only.
  bool ecn = true;
  uint64_t rto_min_ns = 10'000'000;
  uint32_t initial_cwnd = 10;  // segments
  uint32_t segment_bytes = 1448;
  // Segments per ACK (ns-3's DelAckCount). 1 by default: with ns-3's 200 ms delayed-ACK timer
  // and a 10 ms rto_min, DCTCP flows under ECN marking stalled for tens of ms at 2 (measured).
  uint32_t delayed_ack = 1;
  uint64_t initial_rtt_ns = 100'000;
  uint64_t socket_buffer_bytes = 1'000'000;
  // SYNs sent before a connection gives up (ns-3's ConnCount; the wait doubles from
  // syn_timeout). ns-3's default 6 gives up after about 63 syn_timeouts; Linux (tcp_syn_retries
  // 6 from a 1 s TCP_TIMEOUT_INIT) keeps trying for 127 s.
  uint32_t syn_retries = 6;
  // The first SYN and SYN-ACK retransmission timeout (ns-3's ConnTimeout); 0: rto_min. Linux
  // waits 1 s (TCP_TIMEOUT_INIT), whatever the route's rto_min.
  uint64_t syn_timeout_ns = 0;

  // [workload.websearch]: every host starts flows at Poisson times.
  struct WebSearch {
    bool enabled = false;
    // Offered load: of each host's share of the fabric (host rate / oversubscription, as the
    // Credence and ABM simulations define it), so at load 1 a fabric's uplinks are full.
    double load = 0;
    std::string cdf;         // flow-size CDF file
    bool other_leaf = true;  // destinations under another leaf (fabric), else any other host
    uint64_t short_below = 100'000;  // flows below this are "short" (DSCP dscp_short)
    uint8_t dscp_short = 0, dscp_long = 0;
  } websearch;

  // [workload.incast]: query/response. Each aggregator issues queries at Poisson times; a
  // query makes fan_in responders send bytes / fan_in each to the aggregator at once.
  struct Incast {
    bool enabled = false;
    double rate = 0;           // queries per second per aggregator
    uint32_t aggregators = 0;  // the first N hosts; 0 = every host
    uint64_t bytes = 0;        // per query, all responses together
    uint32_t fan_in = 0;
    bool one_leaf = true;  // all responders under one other leaf (fabric), else random hosts
    uint8_t dscp = 0;
    uint32_t initial_cwnd = 0;         // segments; 0 = the transport's
    bool whole_response_cwnd = false;  // initial_cwnd = "whole": each response in one window
  } incast;

  // [[workload.flows]]: fixed flows, each sender to one receiver from `start`.
  struct FixedFlow {
    std::vector<uint32_t> from;
    uint32_t to = 0;
    bool udp = false;
    double rate = 0;     // UDP: a multiple of the sender's link rate
    uint64_t bytes = 0;  // TCP: 0 = unlimited
    uint64_t start_ns = 0;
    uint8_t dscp = 0;
  };
  std::vector<FixedFlow> flows;

  // [run]
  uint64_t duration_ns = 0;
  double flows_until = 0.8;  // no generated flow or query starts after this share of duration
  uint32_t seed = 1;
  uint64_t sample_ns = 50'000;  // occupancy sampling
  bool sample_queues = false;   // occupancy.csv per queue (else per switch)
};

// Reads and validates a scenario file. `overrides` are "dotted.key=value" (TOML value; a value
// that does not parse as TOML is a string). Throws std::runtime_error naming file, line and key.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace sharebuf::sim

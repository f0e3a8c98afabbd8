// FlowWorkload: web-search-like traffic for sharebuf-sim (C++17, ns-3). Every sender host starts
// flows at Poisson times at `load` times its link rate, each of a size drawn from a flow-size
// CDF (data/websearch-flow-size-cdf.txt, common/flow_size_cdf.h) to a receiver drawn uniformly;
// a flow is a TCP connection (BulkSend of exactly its size to a PacketSink on a port of its own).
// Its completion time runs from its start to the moment the receiver holds its last byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/flow_size_cdf.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

namespace sharebuf::sim {

class FlowWorkload {
 public:
  struct Flow {
    uint32_t id = 0, src = 0, dst = 0;
    uint64_t bytes = 0;
    int64_t start_ns = 0;
    int64_t fct_ns = -1;  // -1: not complete when the simulation ended
    uint64_t received = 0;
  };
  struct Settings {
    double load = 0.5;        // of each sender's link rate
    uint64_t link_bps = 0;    // the senders' link rate
    int64_t until_ns = 0;     // no flow starts after this
    int64_t base_rtt_ns = 0;  // for the slowdown's ideal time
    std::string cdf_path;
  };

  FlowWorkload(ns3::NodeContainer hosts, std::vector<ns3::Ipv4Address> ips,
               std::vector<uint32_t> senders, std::vector<uint32_t> receivers,
               const Settings& settings);
  // Schedules every sender's first flow.
  void Start();
  // One row per flow: id,src,dst,bytes,start_ns,fct_ns,slowdown (ideal = bytes x 8 / link rate
  // + base RTT); flows still open at the end have fct_ns -1.
  void WriteCsv(const std::string& path) const;
  // JSON: flows started and completed; short (< 100 KB) flows' p50/p99/p99.9 FCT (ms) and p99
  // slowdown; long (>= 100 KB) flows' mean goodput (Gbit/s).
  std::string SummaryJson() const;

  void OnRx(uint32_t flow, uint32_t bytes);

 private:
  void NextFlow(uint32_t sender);

  ns3::NodeContainer hosts_;
  std::vector<ns3::Ipv4Address> ips_;
  std::vector<uint32_t> senders_, receivers_;
  Settings s_;
  common::FlowSizeCdf cdf_;
  double mean_bytes_ = 0;
  ns3::Ptr<ns3::ExponentialRandomVariable> gap_;
  ns3::Ptr<ns3::UniformRandomVariable> uniform_;
  std::vector<Flow> flows_;
  std::vector<uint16_t> next_port_;  // per host
};

}  // namespace sharebuf::sim

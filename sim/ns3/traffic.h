// Traffic: the workloads of a scenario on a Fabric (C++17, ns-3), and what became of every flow.
//
// - Web-search background: every host starts flows at Poisson times, sizes from a flow-size CDF
//   (data/websearch-flow-size-cdf.txt), to a host drawn uniformly (under another leaf, or any
//   other host); the arrival rate makes `load` of the host's share of the fabric.
// - Incast queries: each aggregator issues queries at Poisson times; a query makes `fan_in`
//   responders (all under one other leaf, or drawn at random) send bytes / fan_in each to the
//   aggregator at the same instant. Its completion time (QCT) ends with the last response's last
//   byte.
// - Fixed flows: TCP (of a size or endless) or constant-rate UDP from given hosts.
// Every sender tags its payload with its DSCP and, for the flow's first bandwidth-delay product
// of bytes (host rate x the path's base RTT), as the first BDP (sim/ns3/sender_tag.h).
//
// A TCP flow is one connection: the sender writes exactly its bytes and closes; the receiver's
// one listening socket per host counts bytes per connection, whose flow it learns from the flow id
// in the packets' SenderTag. A flow's completion time runs from its start (the connection attempt)
// to the moment the receiver holds its last byte.
//
// Split across MPI ranks (fabric_partition.h), every rank runs every generator (each host's and
// each aggregator's draws come from random streams of their own, so they do not depend on which
// other events a process runs) and so knows every flow by the same id; only the rank that owns a
// flow's sender opens its socket, and only the rank that owns its receiver sees its bytes arrive.
// MergeResults brings the receivers' results together on one rank; Finish derives the queries.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/flow_size_cdf.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "sim/ns3/fabric.h"
#include "sim/ns3/scenario.h"

namespace sharebuf::sim {

class TcpSender;

class Traffic {
 public:
  enum class Kind : uint8_t { kBackground, kIncast, kFixed };
  struct Flow {
    uint32_t id = 0;
    Kind kind = Kind::kBackground;
    bool udp = false;
    uint32_t src = 0, dst = 0;
    uint64_t bytes = 0;  // 0: endless (fixed flows)
    int64_t start_ns = 0;
    int64_t fct_ns = -1;  // -1: not complete when the simulation ended
    // From start_ns to the first byte delivered (-1: none): the handshake and one trip; 1 s or
    // more when a SYN or SYN-ACK was lost at a Linux-like syn_timeout.
    int64_t first_byte_ns = -1;
    uint64_t received = 0;
    int32_t query = -1;
  };
  struct Query {
    uint32_t id = 0, aggregator = 0;
    int64_t start_ns = 0;
    int64_t qct_ns = -1;
    uint32_t flows = 0, done = 0;
    uint64_t bytes = 0;
  };

  Traffic(const Scenario& scenario, Fabric& fabric);
  ~Traffic();
  // Opens the receivers and schedules every generator's first event.
  void Start();

  const std::vector<Flow>& flows() const { return flows_; }
  const std::vector<Query>& queries() const { return queries_; }
  // Flows complete at this rank's receivers (all of them after MergeResults and Finish).
  uint64_t completed() const { return completed_; }

  // What this rank's receivers saw: every flow whose destination it owns, as text for
  // MergeResults on another rank.
  std::string LocalResults() const;
  void MergeResults(const std::string& results);
  // After the run (and any merge): the completed count and every query's completion.
  void Finish();

  // id,kind,src,dst,bytes,received,start_ns,fct_ns,slowdown,query (slowdown = FCT over the ideal:
  // bytes x 8 / host rate + the path's base RTT; empty while incomplete).
  void WriteFlowsCsv(const std::string& path) const;
  // id,aggregator,start_ns,qct_ns,flows,bytes
  void WriteQueriesCsv(const std::string& path) const;
  // Flow and query statistics by kind and size bucket, as JSON text.
  std::string SummaryJson(int64_t end_ns) const;

  // Called by the senders and receivers.
  void OnAccept(ns3::Ptr<ns3::Socket> socket, const ns3::Address& from);
  void OnRecv(ns3::Ptr<ns3::Socket> socket);
  void OnUdpRecv(ns3::Ptr<ns3::Socket> socket);
  // Every packet delivered to a local host: a SenderTag's flow id names its sender's port.
  void OnLocalDeliver(const ns3::Ipv4Header& header, ns3::Ptr<const ns3::Packet> packet,
                      uint32_t interface);

 private:
  void NextBackground(uint32_t host);
  void NextQuery(uint32_t aggregator);
  uint32_t StartTcp(Kind kind, uint32_t src, uint32_t dst, uint64_t bytes, uint8_t dscp,
                    uint32_t initial_cwnd, int32_t query);
  void StartFixed(size_t index);
  void Delivered(uint32_t flow, uint64_t bytes);
  double Slowdown(const Flow& f) const;
  // A flow's bandwidth-delay product: the host's rate times the path's base RTT. Its senders tag
  // that many bytes first (sender_tag.h).
  uint64_t FirstBdpBytes(uint32_t src, uint32_t dst) const;
  uint32_t OtherHost(uint32_t host, bool other_leaf);
  bool Local(uint32_t host) const { return fabric_.partition().owns_host(host); }

  const Scenario& s_;
  Fabric& fabric_;
  common::FlowSizeCdf cdf_;
  double mean_flow_bytes_ = 0;
  int64_t until_ns_ = 0;
  // Per host (background) and per aggregator (queries): a random stream of its own each.
  std::vector<ns3::Ptr<ns3::ExponentialRandomVariable>> bg_gap_, query_gap_;
  std::vector<ns3::Ptr<ns3::UniformRandomVariable>> bg_pick_, query_pick_;
  std::vector<Flow> flows_;
  std::vector<Query> queries_;
  std::vector<std::unique_ptr<TcpSender>> senders_;
  std::vector<ns3::Ptr<ns3::Socket>> listeners_;
  std::unordered_map<uint64_t, uint32_t> flow_by_peer_;  // (address << 16 | port), from the tags
  std::unordered_map<const ns3::Socket*, uint32_t> flow_by_socket_;  // accepted connections
  uint64_t completed_ = 0;
};

}  // namespace sharebuf::sim

#include "sim/ns3/traffic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ns3/applications-module.h"
#include "sim/ns3/sender_tag.h"

namespace sharebuf::sim {

namespace {

constexpr uint16_t kTcpPort = 5000;
constexpr uint16_t kUdpPort = 5001;
constexpr uint32_t kUdpPayload = 1472;  // a 1500-byte IP packet

uint64_t PeerKey(ns3::Ipv4Address a, uint16_t port) {
  return (uint64_t{a.Get()} << 16) | port;
}

const char* KindName(Traffic::Kind k) {
  switch (k) {
    case Traffic::Kind::kBackground:
      return "background";
    case Traffic::Kind::kIncast:
      return "incast";
    case Traffic::Kind::kFixed:
      return "fixed";
  }
  return "?";
}

// Nearest-rank percentiles and the mean of a sample (ms), as JSON.
nlohmann::json Stats(std::vector<double> v) {
  nlohmann::json out = nlohmann::json::object();
  out["count"] = v.size();
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  auto pct = [&](double p) {
    const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  double sum = 0;
  for (double x : v)
    sum += x;
  out["mean"] = sum / static_cast<double>(v.size());
  out["p50"] = pct(50);
  out["p95"] = pct(95);
  out["p99"] = pct(99);
  out["p999"] = pct(99.9);
  out["max"] = v.back();
  return out;
}

}  // namespace

// One TCP flow's sending side: connects, writes exactly its bytes (or forever), then closes.
class TcpSender {
 public:
  TcpSender(uint32_t flow, uint64_t bytes, uint64_t bdp_bytes)
      : flow_(flow), remaining_(bytes), endless_(bytes == 0), bdp_(bdp_bytes) {}

  void Start(ns3::Ptr<ns3::Node> node, ns3::Ipv4Address dst, uint8_t dscp, uint32_t initial_cwnd) {
    dscp_ = dscp;
    socket_ = ns3::Socket::CreateSocket(node, ns3::TcpSocketFactory::GetTypeId());
    if (initial_cwnd != 0) socket_->SetAttribute("InitialCwnd", ns3::UintegerValue(initial_cwnd));
    socket_->Bind();
    socket_->SetConnectCallback(ns3::MakeCallback(&TcpSender::Connected, this),
                                ns3::MakeCallback(&TcpSender::Failed, this));
    socket_->SetSendCallback(ns3::MakeCallback(&TcpSender::Space, this));
    socket_->Connect(ns3::InetSocketAddress(dst, kTcpPort));
  }

 private:
  void Connected(ns3::Ptr<ns3::Socket>) {
    connected_ = true;
    Fill();
  }
  void Failed(ns3::Ptr<ns3::Socket>) {}  // the flow stays incomplete
  void Space(ns3::Ptr<ns3::Socket>, uint32_t) {
    if (connected_) Fill();
  }
  void Fill() {
    while (endless_ || remaining_ > 0) {
      const uint32_t room = socket_->GetTxAvailable();
      if (room == 0) return;
      const uint64_t n =
          bdp_.Next(std::min<uint64_t>({room, endless_ ? room : remaining_, 1u << 16}));
      ns3::Ptr<ns3::Packet> p = ns3::Create<ns3::Packet>(static_cast<uint32_t>(n));
      p->AddPacketTag(SenderTag(dscp_, bdp_.InFirstBdp(), flow_));  // sender_tag.h: why a tag
      const int sent = socket_->Send(p);
      if (sent <= 0) return;
      bdp_.Sent(static_cast<uint64_t>(sent));
      if (!endless_) remaining_ -= static_cast<uint64_t>(sent);
    }
    if (!closed_) {
      closed_ = true;
      socket_->Close();  // the FIN follows the data
    }
  }

  uint32_t flow_;
  uint64_t remaining_;
  bool endless_;
  FirstBdpCounter bdp_;
  bool connected_ = false, closed_ = false;
  ns3::Ptr<ns3::Socket> socket_;
  uint8_t dscp_ = 0;
};

// A constant-rate UDP sender (fixed flows): 1500-byte packets at `rate_bps`.
class UdpSender : public ns3::SimpleRefCount<UdpSender> {
 public:
  UdpSender(uint32_t flow, uint64_t bdp_bytes) : flow_(flow), bdp_(bdp_bytes) {}
  static void Start(uint32_t flow, ns3::Ptr<ns3::Node> node, ns3::Ipv4Address dst, uint8_t dscp,
                    double rate_bps, uint64_t bdp_bytes) {
    ns3::Ptr<UdpSender> u = ns3::Create<UdpSender>(flow, bdp_bytes);
    u->socket_ = ns3::Socket::CreateSocket(node, ns3::UdpSocketFactory::GetTypeId());
    u->socket_->Bind();
    u->socket_->Connect(ns3::InetSocketAddress(dst, kUdpPort));
    u->dscp_ = dscp;
    u->gap_ =
        ns3::NanoSeconds(static_cast<int64_t>(std::llround((kUdpPayload + 28) * 8e9 / rate_bps)));
    u->Send();
  }

 private:
  void Send() {
    ns3::Ptr<ns3::Packet> p = ns3::Create<ns3::Packet>(kUdpPayload);
    p->AddPacketTag(SenderTag(dscp_, bdp_.InFirstBdp(), flow_));
    if (socket_->Send(p) > 0) bdp_.Sent(kUdpPayload);
    ns3::Simulator::Schedule(gap_, &UdpSender::Send, ns3::Ptr<UdpSender>(this));
  }
  ns3::Ptr<ns3::Socket> socket_;
  ns3::Time gap_;
  uint8_t dscp_ = 0;
  uint32_t flow_;
  FirstBdpCounter bdp_;
};

Traffic::Traffic(const Scenario& scenario, Fabric& fabric)
    : s_(scenario),
      fabric_(fabric),
      cdf_(scenario.websearch.enabled ? common::FlowSizeCdf::load(scenario.websearch.cdf)
                                      : common::FlowSizeCdf{}),
      until_ns_(
          static_cast<int64_t>(scenario.flows_until * static_cast<double>(scenario.duration_ns))) {
  if (s_.websearch.enabled) {
    const int n = 100000;  // the CDF's mean, for the arrival rate that makes the load
    for (int i = 0; i < n; ++i)
      mean_flow_bytes_ += static_cast<double>(cdf_.quantile((i + 0.5) / n)) / n;
  }
  // Fixed streams, four per host: the same seed and run give the same traffic whatever else draws
  // numbers, and a host's draws do not depend on the order of other hosts' events (which a run
  // split across ranks does not keep between hosts of different ranks).
  for (uint32_t h = 0; h < s_.hosts; ++h) {
    const int64_t base = 1000 + 4 * static_cast<int64_t>(h);
    bg_gap_.push_back(ns3::CreateObject<ns3::ExponentialRandomVariable>());
    bg_gap_.back()->SetStream(base);
    bg_pick_.push_back(ns3::CreateObject<ns3::UniformRandomVariable>());
    bg_pick_.back()->SetStream(base + 1);
    query_gap_.push_back(ns3::CreateObject<ns3::ExponentialRandomVariable>());
    query_gap_.back()->SetStream(base + 2);
    query_pick_.push_back(ns3::CreateObject<ns3::UniformRandomVariable>());
    query_pick_.back()->SetStream(base + 3);
  }
}

Traffic::~Traffic() = default;

void Traffic::Start() {
  const ns3::NodeContainer& hosts = fabric_.hosts();
  for (uint32_t h = 0; h < hosts.GetN(); ++h) {
    if (!Local(h)) continue;
    hosts.Get(h)->GetObject<ns3::Ipv4L3Protocol>()->TraceConnectWithoutContext(
        "LocalDeliver", ns3::MakeCallback(&Traffic::OnLocalDeliver, this));
    ns3::Ptr<ns3::Socket> tcp =
        ns3::Socket::CreateSocket(hosts.Get(h), ns3::TcpSocketFactory::GetTypeId());
    tcp->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kTcpPort));
    tcp->Listen();
    tcp->SetAcceptCallback(
        ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
        ns3::MakeCallback(&Traffic::OnAccept, this));
    listeners_.push_back(tcp);
    ns3::Ptr<ns3::Socket> udp =
        ns3::Socket::CreateSocket(hosts.Get(h), ns3::UdpSocketFactory::GetTypeId());
    udp->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kUdpPort));
    udp->SetRecvCallback(ns3::MakeCallback(&Traffic::OnUdpRecv, this));
    listeners_.push_back(udp);
  }
  if (s_.websearch.enabled) {
    // Per host: load x (host rate / oversubscription) bytes per second, in flows of the mean size.
    const double bytes_per_s =
        s_.websearch.load * static_cast<double>(s_.host_rate_bps) / s_.oversubscription / 8.0;
    for (uint32_t h = 0; h < s_.hosts; ++h) {
      bg_gap_[h]->SetAttribute("Mean", ns3::DoubleValue(mean_flow_bytes_ / bytes_per_s));
      ns3::Simulator::Schedule(ns3::Seconds(bg_gap_[h]->GetValue()), &Traffic::NextBackground, this,
                               h);
    }
  }
  if (s_.incast.enabled) {
    const uint32_t n = s_.incast.aggregators == 0 ? s_.hosts : s_.incast.aggregators;
    for (uint32_t a = 0; a < n; ++a) {
      query_gap_[a]->SetAttribute("Mean", ns3::DoubleValue(1.0 / s_.incast.rate));
      ns3::Simulator::Schedule(ns3::Seconds(query_gap_[a]->GetValue()), &Traffic::NextQuery, this,
                               a);
    }
  }
  for (size_t i = 0; i < s_.flows.size(); ++i) {
    ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<int64_t>(s_.flows[i].start_ns)),
                             &Traffic::StartFixed, this, i);
  }
}

uint32_t Traffic::OtherHost(uint32_t host, bool other_leaf) {
  if (other_leaf) {
    // Uniform over the hosts under the other leaves.
    const uint32_t per_leaf = s_.hosts_per_leaf;
    const uint32_t others = s_.hosts - per_leaf;
    uint32_t r = std::min(others - 1, static_cast<uint32_t>(bg_pick_[host]->GetValue() * others));
    const uint32_t first = fabric_.leaf_of(host) * per_leaf;
    return r < first ? r : r + per_leaf;
  }
  const uint32_t r =
      std::min(s_.hosts - 2, static_cast<uint32_t>(bg_pick_[host]->GetValue() * (s_.hosts - 1)));
  return r < host ? r : r + 1;
}

void Traffic::NextBackground(uint32_t host) {
  if (ns3::Simulator::Now().GetNanoSeconds() > until_ns_) return;
  const uint32_t dst = OtherHost(host, s_.websearch.other_leaf);
  const uint64_t bytes = std::max<uint64_t>(1, cdf_.quantile(bg_pick_[host]->GetValue()));
  const uint8_t dscp =
      bytes < s_.websearch.short_below ? s_.websearch.dscp_short : s_.websearch.dscp_long;
  StartTcp(Kind::kBackground, host, dst, bytes, dscp, 0, -1);
  ns3::Simulator::Schedule(ns3::Seconds(bg_gap_[host]->GetValue()), &Traffic::NextBackground, this,
                           host);
}

void Traffic::NextQuery(uint32_t aggregator) {
  if (ns3::Simulator::Now().GetNanoSeconds() > until_ns_) return;
  const Scenario::Incast& q = s_.incast;
  std::vector<uint32_t> pool;
  if (q.one_leaf) {
    // Every responder under one other leaf, drawn uniformly.
    const uint32_t leaves = s_.leaves - 1;
    uint32_t leaf =
        std::min(leaves - 1, static_cast<uint32_t>(query_pick_[aggregator]->GetValue() * leaves));
    if (leaf >= fabric_.leaf_of(aggregator)) ++leaf;
    for (uint32_t h = 0; h < s_.hosts_per_leaf; ++h)
      pool.push_back(leaf * s_.hosts_per_leaf + h);
  } else {
    for (uint32_t h = 0; h < s_.hosts; ++h) {
      if (h != aggregator) pool.push_back(h);
    }
  }
  // fan_in of the pool, drawn without replacement (a partial Fisher-Yates shuffle).
  for (uint32_t i = 0; i < q.fan_in && i + 1 < pool.size(); ++i) {
    const uint32_t j = i + std::min(static_cast<uint32_t>(pool.size()) - i - 1,
                                    static_cast<uint32_t>(query_pick_[aggregator]->GetValue() *
                                                          static_cast<double>(pool.size() - i)));
    std::swap(pool[i], pool[j]);
  }
  Query query;
  query.id = static_cast<uint32_t>(queries_.size());
  query.aggregator = aggregator;
  query.start_ns = ns3::Simulator::Now().GetNanoSeconds();
  query.flows = q.fan_in;
  query.bytes = q.bytes;
  queries_.push_back(query);
  for (uint32_t i = 0; i < q.fan_in; ++i) {
    const uint64_t bytes = q.bytes / q.fan_in + (i < q.bytes % q.fan_in ? 1 : 0);
    const uint32_t iw =
        q.whole_response_cwnd
            ? static_cast<uint32_t>((bytes + s_.segment_bytes - 1) / s_.segment_bytes)
            : q.initial_cwnd;
    StartTcp(Kind::kIncast, pool[i], aggregator, bytes, q.dscp, iw, static_cast<int32_t>(query.id));
  }
  ns3::Simulator::Schedule(ns3::Seconds(query_gap_[aggregator]->GetValue()), &Traffic::NextQuery,
                           this, aggregator);
}

uint32_t Traffic::StartTcp(Kind kind, uint32_t src, uint32_t dst, uint64_t bytes, uint8_t dscp,
                           uint32_t initial_cwnd, int32_t query) {
  Flow f;
  f.id = static_cast<uint32_t>(flows_.size());
  f.kind = kind;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.start_ns = ns3::Simulator::Now().GetNanoSeconds();
  f.query = query;
  flows_.push_back(f);
  if (!Local(src)) return f.id;  // another rank's sender
  senders_.push_back(std::make_unique<TcpSender>(f.id, bytes, FirstBdpBytes(src, dst)));
  senders_.back()->Start(fabric_.hosts().Get(src), fabric_.host_ip(dst), dscp, initial_cwnd);
  return f.id;
}

void Traffic::StartFixed(size_t index) {
  const Scenario::FixedFlow& spec = s_.flows[index];
  for (uint32_t src : spec.from) {
    if (!spec.udp) {
      StartTcp(Kind::kFixed, src, spec.to, spec.bytes, spec.dscp, 0, -1);
      continue;
    }
    Flow f;
    f.id = static_cast<uint32_t>(flows_.size());
    f.kind = Kind::kFixed;
    f.udp = true;
    f.src = src;
    f.dst = spec.to;
    f.start_ns = ns3::Simulator::Now().GetNanoSeconds();
    flows_.push_back(f);
    if (!Local(src)) continue;
    UdpSender::Start(f.id, fabric_.hosts().Get(src), fabric_.host_ip(spec.to), spec.dscp,
                     spec.rate * static_cast<double>(s_.host_rate_bps),
                     FirstBdpBytes(src, spec.to));
  }
}

void Traffic::OnLocalDeliver(const ns3::Ipv4Header& header, ns3::Ptr<const ns3::Packet> packet,
                             uint32_t) {
  SenderTag tag;
  if (!packet->PeekPacketTag(tag) || tag.flow() == SenderTag::kNoFlow || packet->GetSize() < 2)
    return;
  uint8_t b[2];  // the source port: the first two bytes of TCP's and UDP's headers
  packet->CopyData(b, 2);
  // A later flow from the same address and port (the port reused) replaces the entry.
  flow_by_peer_[PeerKey(header.GetSource(), static_cast<uint16_t>((b[0] << 8) | b[1]))] =
      tag.flow();
}

void Traffic::OnAccept(ns3::Ptr<ns3::Socket> socket, const ns3::Address&) {
  // The flow is known from its first data packet's tag (OnLocalDeliver, then OnRecv). A new
  // socket may sit where a closed one was: forget that one's flow.
  flow_by_socket_.erase(ns3::PeekPointer(socket));
  socket->SetRecvCallback(ns3::MakeCallback(&Traffic::OnRecv, this));
  // The sender's FIN (after all its data, which OnRecv has read): close our side too, so
  // finished connections do not linger. A later socket at the same address replaces the entry.
  using SocketCallback = ns3::Callback<void, ns3::Ptr<ns3::Socket>>;
  socket->SetCloseCallbacks(SocketCallback([](ns3::Ptr<ns3::Socket> s) { s->Close(); }),
                            SocketCallback([](ns3::Ptr<ns3::Socket>) {}));
}

void Traffic::OnRecv(ns3::Ptr<ns3::Socket> socket) {
  auto it = flow_by_socket_.find(ns3::PeekPointer(socket));
  if (it == flow_by_socket_.end()) {
    ns3::Address from;
    socket->GetPeerName(from);
    const ns3::InetSocketAddress peer = ns3::InetSocketAddress::ConvertFrom(from);
    const auto f = flow_by_peer_.find(PeerKey(peer.GetIpv4(), peer.GetPort()));
    if (f != flow_by_peer_.end())
      it = flow_by_socket_.emplace(ns3::PeekPointer(socket), f->second).first;
  }
  ns3::Ptr<ns3::Packet> p;
  while ((p = socket->Recv())) {
    if (it != flow_by_socket_.end()) Delivered(it->second, p->GetSize());
  }
}

void Traffic::OnUdpRecv(ns3::Ptr<ns3::Socket> socket) {
  ns3::Address from;
  ns3::Ptr<ns3::Packet> p;
  while ((p = socket->RecvFrom(from))) {
    const ns3::InetSocketAddress peer = ns3::InetSocketAddress::ConvertFrom(from);
    const auto it = flow_by_peer_.find(PeerKey(peer.GetIpv4(), peer.GetPort()));
    if (it != flow_by_peer_.end()) flows_[it->second].received += p->GetSize();
  }
}

void Traffic::Delivered(uint32_t id, uint64_t bytes) {
  Flow& f = flows_[id];
  if (f.received == 0 && bytes > 0)
    f.first_byte_ns = ns3::Simulator::Now().GetNanoSeconds() - f.start_ns;
  f.received += bytes;
  if (f.fct_ns >= 0 || f.bytes == 0 || f.received < f.bytes) return;
  f.fct_ns = ns3::Simulator::Now().GetNanoSeconds() - f.start_ns;
  ++completed_;
}

std::string Traffic::LocalResults() const {
  // id received fct_ns first_byte_ns, a line per flow this rank received.
  std::string out;
  for (const Flow& f : flows_) {
    if (!Local(f.dst)) continue;
    out += std::to_string(f.id) + ' ' + std::to_string(f.received) + ' ' +
           std::to_string(f.fct_ns) + ' ' + std::to_string(f.first_byte_ns) + '\n';
  }
  return out;
}

void Traffic::MergeResults(const std::string& results) {
  const char* p = results.c_str();
  char* end = nullptr;
  while (*p != '\0') {
    const unsigned long long id = std::strtoull(p, &end, 10);
    const unsigned long long received = std::strtoull(end, &end, 10);
    const long long fct = std::strtoll(end, &end, 10);
    const long long first = std::strtoll(end, &end, 10);
    if (end == p || id >= flows_.size()) throw std::runtime_error("bad results from a rank");
    flows_[id].received = received;
    flows_[id].fct_ns = fct;
    flows_[id].first_byte_ns = first;
    p = end;
    while (*p == '\n')
      ++p;
  }
}

void Traffic::Finish() {
  // A query completes with its last response's last byte.
  completed_ = 0;
  for (Query& q : queries_) {
    q.done = 0;
    q.qct_ns = -1;
  }
  std::vector<int64_t> last(queries_.size(), 0);
  for (const Flow& f : flows_) {
    if (f.fct_ns < 0) continue;
    ++completed_;
    if (f.query < 0) continue;
    const size_t q = static_cast<size_t>(f.query);
    ++queries_[q].done;
    last[q] = std::max(last[q], f.start_ns + f.fct_ns);
  }
  for (size_t q = 0; q < queries_.size(); ++q) {
    if (queries_[q].done == queries_[q].flows) queries_[q].qct_ns = last[q] - queries_[q].start_ns;
  }
}

uint64_t Traffic::FirstBdpBytes(uint32_t src, uint32_t dst) const {
  return static_cast<uint64_t>(static_cast<double>(s_.host_rate_bps) / 8e9 *
                               static_cast<double>(fabric_.base_rtt_ns(src, dst)));
}

double Traffic::Slowdown(const Flow& f) const {
  const double ideal = static_cast<double>(f.bytes) * 8e9 / static_cast<double>(s_.host_rate_bps) +
                       static_cast<double>(fabric_.base_rtt_ns(f.src, f.dst));
  return static_cast<double>(f.fct_ns) / ideal;
}

void Traffic::WriteFlowsCsv(const std::string& path) const {
  std::ofstream out(path);
  out << "id,kind,src,dst,bytes,received,start_ns,fct_ns,slowdown,query,first_byte_ns\n";
  char buf[32];
  for (const Flow& f : flows_) {
    out << f.id << ',' << KindName(f.kind) << (f.udp ? "-udp" : "") << ',' << f.src << ',' << f.dst
        << ',' << f.bytes << ',' << f.received << ',' << f.start_ns << ',' << f.fct_ns << ',';
    if (f.fct_ns >= 0) {
      std::snprintf(buf, sizeof buf, "%.4f", Slowdown(f));
      out << buf;
    }
    out << ',' << f.query << ',' << f.first_byte_ns << '\n';
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

void Traffic::WriteQueriesCsv(const std::string& path) const {
  std::ofstream out(path);
  out << "id,aggregator,start_ns,qct_ns,flows,bytes\n";
  for (const Query& q : queries_) {
    out << q.id << ',' << q.aggregator << ',' << q.start_ns << ',' << q.qct_ns << ',' << q.flows
        << ',' << q.bytes << '\n';
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string Traffic::SummaryJson(int64_t end_ns) const {
  // Background flows by size: short (< 100 KB), medium, long (>= 1 MB).
  struct Bucket {
    uint64_t count = 0, completed = 0;
    std::vector<double> fct_ms, slowdown;
    double goodput_sum = 0;
  };
  Bucket shrt, medium, lng, incast;
  nlohmann::json fixed = nlohmann::json::array();
  for (const Flow& f : flows_) {
    if (f.kind == Kind::kFixed) {
      const double secs = static_cast<double>(end_ns - f.start_ns) / 1e9;
      fixed.push_back(
          {{"from", f.src},
           {"to", f.dst},
           {"protocol", f.udp ? "udp" : "tcp"},
           {"bytes", f.bytes},
           {"received", f.received},
           {"fct_ms", f.fct_ns >= 0 ? static_cast<double>(f.fct_ns) / 1e6 : -1.0},
           {"goodput_gbps", secs > 0 ? static_cast<double>(f.received) * 8 / secs / 1e9 : 0.0}});
      continue;
    }
    Bucket& b = f.kind == Kind::kIncast ? incast
                : f.bytes < 100'000     ? shrt
                : f.bytes < 1'000'000   ? medium
                                        : lng;
    ++b.count;
    if (f.fct_ns < 0) continue;
    ++b.completed;
    b.fct_ms.push_back(static_cast<double>(f.fct_ns) / 1e6);
    b.slowdown.push_back(Slowdown(f));
    b.goodput_sum += static_cast<double>(f.bytes) * 8 / static_cast<double>(f.fct_ns);
  }
  auto bucket = [](const Bucket& b, bool goodput) {
    nlohmann::json j = {{"flows", b.count},
                        {"completed", b.completed},
                        {"fct_ms", Stats(b.fct_ms)},
                        {"slowdown", Stats(b.slowdown)}};
    if (goodput)
      j["goodput_gbps_mean"] = b.completed ? b.goodput_sum / static_cast<double>(b.completed) : 0;
    return j;
  };
  std::vector<double> qct;
  uint64_t queries_done = 0;
  for (const Query& q : queries_) {
    if (q.qct_ns < 0) continue;
    ++queries_done;
    qct.push_back(static_cast<double>(q.qct_ns) / 1e6);
  }
  nlohmann::json out = {
      {"flows", flows_.size()},
      {"completed", completed_},
      {"background",
       {{"short", bucket(shrt, false)},
        {"medium", bucket(medium, true)},
        {"long", bucket(lng, true)}}},
      {"incast", bucket(incast, false)},
      {"queries",
       {{"count", queries_.size()}, {"completed", queries_done}, {"qct_ms", Stats(qct)}}},
      {"fixed", fixed}};
  return out.dump();
}

}  // namespace sharebuf::sim

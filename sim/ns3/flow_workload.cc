#include "sim/ns3/flow_workload.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"

namespace sharebuf::sim {

namespace {

void FlowRx(FlowWorkload* w, uint32_t flow, ns3::Ptr<const ns3::Packet> p, const ns3::Address&) {
  w->OnRx(flow, p->GetSize());
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(
      v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

}  // namespace

FlowWorkload::FlowWorkload(ns3::NodeContainer hosts, std::vector<ns3::Ipv4Address> ips,
                           std::vector<uint32_t> senders, std::vector<uint32_t> receivers,
                           const Settings& settings)
    : hosts_(hosts),
      ips_(std::move(ips)),
      senders_(std::move(senders)),
      receivers_(std::move(receivers)),
      s_(settings),
      cdf_(common::FlowSizeCdf::load(settings.cdf_path)),
      next_port_(hosts.GetN(), 10000) {
  // The CDF's mean, for the arrival rate that makes the offered load.
  const int n = 100000;
  for (int i = 0; i < n; ++i)
    mean_bytes_ += static_cast<double>(cdf_.quantile((i + 0.5) / n)) / n;
  const double flows_per_s = s_.load * static_cast<double>(s_.link_bps) / 8.0 / mean_bytes_;
  gap_ = ns3::CreateObject<ns3::ExponentialRandomVariable>();
  gap_->SetAttribute("Mean", ns3::DoubleValue(1.0 / flows_per_s));
  uniform_ = ns3::CreateObject<ns3::UniformRandomVariable>();
  // Fixed streams: the same seed and run give the same flows whatever else draws numbers.
  gap_->SetStream(1000);
  uniform_->SetStream(1001);
}

void FlowWorkload::Start() {
  for (uint32_t s : senders_)
    ns3::Simulator::Schedule(ns3::Seconds(gap_->GetValue()), &FlowWorkload::NextFlow, this, s);
}

void FlowWorkload::NextFlow(uint32_t sender) {
  const int64_t now = ns3::Simulator::Now().GetNanoSeconds();
  if (now > s_.until_ns) return;
  Flow f;
  f.id = static_cast<uint32_t>(flows_.size());
  f.src = sender;
  f.dst = receivers_[std::min<size_t>(
      receivers_.size() - 1,
      static_cast<size_t>(uniform_->GetValue() * static_cast<double>(receivers_.size())))];
  f.bytes = std::max<uint64_t>(1, cdf_.quantile(uniform_->GetValue()));
  f.start_ns = now;
  const uint16_t port = next_port_[f.dst]++;
  if (port == 0) throw std::runtime_error("FlowWorkload: a receiver ran out of ports");
  flows_.push_back(f);
  ns3::PacketSinkHelper sink("ns3::TcpSocketFactory",
                             ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port));
  ns3::ApplicationContainer rx = sink.Install(hosts_.Get(f.dst));
  rx.Get(0)->TraceConnectWithoutContext("Rx", ns3::MakeBoundCallback(&FlowRx, this, f.id));
  ns3::BulkSendHelper bulk("ns3::TcpSocketFactory", ns3::InetSocketAddress(ips_[f.dst], port));
  bulk.SetAttribute("MaxBytes", ns3::UintegerValue(f.bytes));
  bulk.Install(hosts_.Get(f.src));
  ns3::Simulator::Schedule(ns3::Seconds(gap_->GetValue()), &FlowWorkload::NextFlow, this, sender);
}

void FlowWorkload::OnRx(uint32_t flow, uint32_t bytes) {
  Flow& f = flows_[flow];
  f.received += bytes;
  if (f.fct_ns < 0 && f.received >= f.bytes)
    f.fct_ns = ns3::Simulator::Now().GetNanoSeconds() - f.start_ns;
}

void FlowWorkload::WriteCsv(const std::string& path) const {
  std::ofstream out(path);
  out << "id,src,dst,bytes,start_ns,fct_ns,slowdown\n";
  for (const Flow& f : flows_) {
    const double ideal = static_cast<double>(f.bytes) * 8e9 / static_cast<double>(s_.link_bps) +
                         static_cast<double>(s_.base_rtt_ns);
    out << f.id << ',' << f.src << ',' << f.dst << ',' << f.bytes << ',' << f.start_ns << ','
        << f.fct_ns << ',';
    if (f.fct_ns >= 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(f.fct_ns) / ideal);
      out << buf;
    }
    out << '\n';
  }
}

std::string FlowWorkload::SummaryJson() const {
  std::vector<double> short_fct, short_slow;
  double long_goodput = 0;
  uint64_t done = 0, long_n = 0;
  for (const Flow& f : flows_) {
    if (f.fct_ns < 0) continue;
    ++done;
    const double ideal = static_cast<double>(f.bytes) * 8e9 / static_cast<double>(s_.link_bps) +
                         static_cast<double>(s_.base_rtt_ns);
    if (f.bytes < 100'000) {
      short_fct.push_back(static_cast<double>(f.fct_ns) / 1e6);
      short_slow.push_back(static_cast<double>(f.fct_ns) / ideal);
    } else {
      long_goodput += static_cast<double>(f.bytes) * 8.0 / static_cast<double>(f.fct_ns);
      ++long_n;
    }
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"flows\": %zu, \"completed\": %llu, \"short\": %zu, \"short_fct_ms\": "
                "{\"p50\": %.4f, \"p99\": %.4f, \"p999\": %.4f}, \"short_slowdown_p99\": %.3f, "
                "\"long\": %llu, \"long_goodput_gbps\": %.4f}",
                flows_.size(), static_cast<unsigned long long>(done), short_fct.size(),
                Percentile(short_fct, 50), Percentile(short_fct, 99), Percentile(short_fct, 99.9),
                Percentile(short_slow, 99), static_cast<unsigned long long>(long_n),
                long_n ? long_goodput / static_cast<double>(long_n) : 0.0);
  return buf;
}

}  // namespace sharebuf::sim

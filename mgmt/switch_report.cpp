#include "mgmt/switch_report.h"

#include <cstdio>

#include "buffer/drop_reason.h"

namespace sharebuf::mgmt {
namespace {

// The non-empty buckets of a queue's delay histogram as [lowest ns of the bucket, frames].
nlohmann::json delay_buckets(const buffer::DelayHistogram& h) {
  nlohmann::json out = nlohmann::json::array();
  for (int b = 0; b < buffer::DelayHistogram::kBuckets; ++b) {
    if (const uint64_t n = h.count_in(b))
      out.push_back({buffer::DelayHistogram::lower_bound(b), n});
  }
  return out;
}

// A port's hop histograms (datapath/hop_latency.h): per hop the count, p50/p99/p99.9 and the
// non-empty buckets.
nlohmann::json hop_latency_json(const datapath::HopLatency& lat) {
  nlohmann::json out = nlohmann::json::object();
  for (int h = 0; h < datapath::HopLatency::kNumHops; ++h) {
    const buffer::DelayHistogram& hist = lat.hops[h];
    out[std::string(datapath::HopLatency::kNames[static_cast<size_t>(h)])] = {
        {"count", hist.count()},
        {"p50_ns", hist.quantile(0.5)},
        {"p99_ns", hist.quantile(0.99)},
        {"p999_ns", hist.quantile(0.999)},
        {"histogram", delay_buckets(hist)}};
  }
  return out;
}

}  // namespace

nlohmann::json switch_stats_json(const datapath::SwitchCore& core) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const buffer::SharedBuffer& buf = core.buffer;
  const buffer::BufferLayout& layout = buf.layout();
  const policies::Policy& policy = *core.policy.load(std::memory_order_acquire);
  const buffer::BufferView view = buf.view(datapath::monotonic_ns());
  nlohmann::json out;
  out["switch"] = core.config.name;
  out["policy"] = policy.describe(view);
  out["buffer"] = {{"capacity_cells", layout.capacity_cells()},
                   {"cell_bytes", layout.cell_bytes()},
                   {"view", buffer::to_string(buf.view_mode())},
                   {"probe_interval_ns", buf.probes().interval_ns()},
                   {"probe_delay_ns", buf.probes().delay_ns()},
                   {"occupancy_cells", buf.state().total_cells()},
                   {"peak_cells", buf.state().peak_total_cells()},
                   {"free_cells", buf.state().free_cells()},
                   {"pool_physical_cells", buf.pool().physical_cells()},
                   {"pool_free_cells", buf.pool().free_cells_approx()}};
  for (uint32_t p = 0; p < core.ports.size(); ++p) {
    const datapath::PortRuntime& port = *core.ports[p];
    const datapath::PortCounters& c = port.counters;
    nlohmann::json malformed = nlohmann::json::object();
    for (size_t i = 1; i < datapath::kNumParseErrors; ++i) {
      malformed[std::string(datapath::kParseErrorNames[i])] = c.malformed[i].load(kRelaxed);
    }
    nlohmann::json queues = nlohmann::json::array();
    for (uint32_t k = 0; k < layout.queues_on_port(p); ++k) {
      const uint32_t q = layout.queue_id(p, k);
      const buffer::QueueStats& s = buf.stats(q);
      nlohmann::json dropped = nlohmann::json::object();
      for (size_t r = 1; r < buffer::kNumDropReasons; ++r) {
        dropped[std::string(buffer::kDropReasonNames[r])] = s.dropped_pkts[r].load(kRelaxed);
      }
      queues.push_back(
          {{"queue", k},
           {"id", q},
           {"group", buffer::to_string(layout.group_of(q))},
           {"received", s.received_pkts.load(kRelaxed)},
           {"admitted", s.enqueued_pkts.load(kRelaxed)},
           {"admitted_cells", s.enqueued_cells.load(kRelaxed)},
           {"transmitted", s.dequeued_pkts.load(kRelaxed)},
           {"transmitted_bytes", s.dequeued_bytes.load(kRelaxed)},
           {"queued", buf.queue(q).length_packets_approx()},
           {"dropped", dropped},
           {"ecn_marked", s.ecn_marked_pkts.load(kRelaxed)},
           {"delay_p50_ns", s.delay.quantile(0.5)},
           {"delay_p99_ns", s.delay.quantile(0.99)},
           {"delay_histogram", delay_buckets(s.delay)},
           {"occupancy_cells", buf.state().queue_cells(q)},
           {"peak_cells", buf.state().peak_queue_cells(q)},
           {"threshold_cells",
            policy.threshold_cells(q, s.shown_class(core.env.class_of_queue(q)), view)}});
    }
    out["ports"].push_back({{"port", p},
                            {"interface", port.config.name},
                            {"rate_bps", port.config.rate_bps},
                            {"mtu", port.io ? port.io->mtu() : port.link.mtu},
                            {"scheduler", datapath::to_string(port.config.scheduler)},
                            {"rx_frames", c.rx_frames.load(kRelaxed)},
                            {"rx_bytes", c.rx_bytes.load(kRelaxed)},
                            {"tx_frames", c.tx_frames.load(kRelaxed)},
                            {"tx_bytes", c.tx_bytes.load(kRelaxed)},
                            {"tx_errors", c.tx_errors.load(kRelaxed)},
                            {"shaper_catchup_bytes", c.shaper_catchup_bytes.load(kRelaxed)},
                            {"ring_drops", c.ring_drops.load(kRelaxed)},
                            {"truncated", c.truncated.load(kRelaxed)},
                            {"filtered", c.filtered.load(kRelaxed)},
                            {"flooded", c.flooded.load(kRelaxed)},
                            {"oversize", c.oversize.load(kRelaxed)},
                            {"storm_dropped", c.storm_dropped.load(kRelaxed)},
                            {"checksum_completed", c.checksum_completed.load(kRelaxed)},
                            {"malformed", malformed},
                            {"malformed_total", c.malformed_total()},
                            {"latency", hop_latency_json(port.latency)},
                            {"queues", queues}});
  }
  return out;
}

std::string switch_stats_table(const datapath::SwitchCore& core) {
  const nlohmann::json s = switch_stats_json(core);
  std::string out;
  char line[256];
  std::snprintf(
      line, sizeof line, "policy %s; buffer %u cells of %u B; peak %u cells\n",
      s["policy"]["name"].get<std::string>().c_str(), s["buffer"]["capacity_cells"].get<uint32_t>(),
      s["buffer"]["cell_bytes"].get<uint32_t>(), s["buffer"]["peak_cells"].get<uint32_t>());
  out += line;
  std::snprintf(line, sizeof line, "%-12s %9s %9s %9s %10s %10s %8s %8s %7s %8s\n", "port", "rx",
                "tx", "malformed", "ring_drops", "oversize", "filtered", "", "", "");
  out += line;
  for (const auto& p : s["ports"]) {
    std::snprintf(line, sizeof line, "%-12s %9lu %9lu %9lu %10lu %10lu %8lu\n",
                  p["interface"].get<std::string>().c_str(), p["rx_frames"].get<uint64_t>(),
                  p["tx_frames"].get<uint64_t>(), p["malformed_total"].get<uint64_t>(),
                  p["ring_drops"].get<uint64_t>(), p["oversize"].get<uint64_t>(),
                  p["filtered"].get<uint64_t>());
    out += line;
  }
  std::snprintf(line, sizeof line, "%-14s %9s %9s %11s %9s %9s %9s %7s %8s %9s\n", "queue",
                "received", "admitted", "transmitted", "queued", "drop:thr", "drop:pool", "ecn",
                "peak", "threshold");
  out += line;
  for (const auto& p : s["ports"]) {
    for (const auto& q : p["queues"]) {
      const std::string name =
          p["interface"].get<std::string>() + "/" + std::to_string(q["queue"].get<uint32_t>());
      std::snprintf(line, sizeof line, "%-14s %9lu %9lu %11lu %9lu %9lu %9lu %7lu %8u %9u\n",
                    name.c_str(), q["received"].get<uint64_t>(), q["admitted"].get<uint64_t>(),
                    q["transmitted"].get<uint64_t>(), q["queued"].get<uint64_t>(),
                    q["dropped"]["threshold"].get<uint64_t>(),
                    q["dropped"]["pool_full"].get<uint64_t>(), q["ecn_marked"].get<uint64_t>(),
                    q["peak_cells"].get<uint32_t>(), q["threshold_cells"].get<uint32_t>());
      out += line;
    }
  }
  return out;
}

}  // namespace sharebuf::mgmt

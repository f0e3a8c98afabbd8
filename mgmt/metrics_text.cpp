#include "mgmt/metrics_text.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace sharebuf::mgmt {

namespace {

using nlohmann::json;
using Labels = std::vector<std::pair<std::string, std::string>>;

std::string escape_label(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string label_text(const Labels& labels) {
  if (labels.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i != 0) out += ',';
    out += labels[i].first + "=\"" + escape_label(labels[i].second) + '"';
  }
  return out + '}';
}

std::string number_text(double v) {
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), r.ptr);
}

// A sample's value as the JSON holds it: integers exactly (a 64-bit counter must not pass through
// a double), other numbers in their shortest form. nullopt for anything else.
std::optional<std::string> value_text(const json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return number_text(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return std::nullopt;
}

// Families in the order first met; OpenMetrics wants each family's samples together.
class Exposition {
 public:
  void add(const std::string& family, std::string_view type, std::string_view help,
           std::string_view suffix, const Labels& labels, const std::string& value) {
    auto [it, fresh] = index_.try_emplace(family, families_.size());
    if (fresh) families_.push_back({family, std::string(type), std::string(help), {}});
    families_[it->second].samples +=
        family + std::string(suffix) + label_text(labels) + ' ' + value + '\n';
  }
  void counter(const std::string& family, std::string_view help, const Labels& labels,
               const json& v) {
    if (const auto t = value_text(v)) add(family, "counter", help, "_total", labels, *t);
  }
  void gauge(const std::string& family, std::string_view help, const Labels& labels,
             const json& v) {
    if (const auto t = value_text(v)) add(family, "gauge", help, "", labels, *t);
  }
  std::string text() const {
    std::string out;
    for (const Family& f : families_) {
      out += "# TYPE " + f.name + ' ' + f.type + '\n';
      out += "# HELP " + f.name + ' ' + f.help + '\n';
      out += f.samples;
    }
    return out + "# EOF\n";
  }

 private:
  struct Family {
    std::string name, type, help, samples;
  };
  std::vector<Family> families_;
  std::map<std::string, size_t> index_;
};

// The histogram's `le` bounds: 2^k - 1 ns for k in [8, 34], 255 ns to about 17 s. The switch's
// buckets (buffer/delay_histogram.h) begin at every power of two, so the count at or below
// 2^k - 1 ns is exactly the sum of the buckets that begin below 2^k.
constexpr int kFirstPower = 8;
constexpr int kLastPower = 34;

// `buckets`: [[lowest ns of the bucket, count], ...] as the stats JSON holds them.
void histogram(Exposition& e, const std::string& family, std::string_view help,
               const Labels& labels, const json& buckets) {
  if (!buckets.is_array()) return;
  std::vector<std::pair<uint64_t, uint64_t>> b;
  for (const json& entry : buckets) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_unsigned() ||
        !entry[1].is_number_unsigned())
      return;
    b.emplace_back(entry[0].get<uint64_t>(), entry[1].get<uint64_t>());
  }
  uint64_t total = 0;
  for (const auto& [lo, n] : b)
    total += n;
  for (int k = kFirstPower; k <= kLastPower; ++k) {
    const uint64_t limit = uint64_t{1} << k;
    uint64_t below = 0;
    for (const auto& [lo, n] : b)
      if (lo < limit) below += n;
    Labels l = labels;
    l.emplace_back("le", number_text(static_cast<double>(limit - 1) * 1e-9));
    e.add(family, "histogram", help, "_bucket", l, std::to_string(below));
  }
  Labels inf = labels;
  inf.emplace_back("le", "+Inf");
  e.add(family, "histogram", help, "_bucket", inf, std::to_string(total));
  e.add(family, "histogram", help, "_count", labels, std::to_string(total));
}

struct Key {
  const char* json_key;
  const char* metric;  // after "sharebuf_port_" / "sharebuf_queue_" / ...
  const char* help;
};

constexpr Key kPortCounters[] = {
    {"rx_frames", "rx_frames", "Frames the port received from its socket."},
    {"rx_bytes", "rx_bytes", "Bytes the port received."},
    {"tx_frames", "tx_frames", "Frames the port sent."},
    {"tx_bytes", "tx_bytes", "Bytes the port sent."},
    {"tx_errors", "tx_errors", "Frames the port could not send."},
    {"rx_kept_in_chunk", "rx_kept_in_chunk",
     "Frames received that stayed queued in their AF_XDP chunk (shared UMEM)."},
    {"tx_from_chunk", "tx_from_chunk",
     "Frames sent from the AF_XDP chunk they were received into, without a copy."},
    {"ring_drops", "ring_drops",
     "Frames the kernel dropped because the port's RX ring overflowed."},
    {"socket_frames", "socket_frames",
     "Frames the kernel handed the port's socket, by its own count."},
    {"truncated", "truncated", "Frames larger than a ring slot, dropped."},
    {"filtered", "filtered", "Frames whose destination is on their ingress port."},
    {"flooded", "flooded", "Frames flooded for an unknown destination."},
    {"oversize", "oversize", "Frames larger than the egress MTU, dropped."},
    {"storm_dropped", "storm_dropped", "Flooded frames dropped by the storm limit."},
    {"rx_out_of_order", "rx_out_of_order",
     "Frames taken after a later-received frame of the port (per-cpu RX)."},
    {"shaper_catchup_bytes", "shaper_catchup_bytes",
     "Shaper credit sent late because the host woke the egress thread late."},
    {"probe_charged_bytes", "probe_charged_bytes",
     "Bytes of probe frames charged to the port's shaper."},
    {"checksum_completed", "checksum_completed",
     "Frames with partial checksums completed in software."},
    {"interface_rx_frames", "interface_rx_frames",
     "Frames the interface itself received since the switch opened it (netlink rx_packets)."},
    {"before_socket", "before_socket",
     "Frames the interface received that never reached the socket."},
};

constexpr Key kQueueCounters[] = {
    {"received", "received", "Frames classified to the queue."},
    {"admitted", "admitted", "Frames the buffer admitted into the queue."},
    {"admitted_cells", "admitted_cells", "Cells of the frames admitted."},
    {"transmitted", "transmitted", "Frames the queue sent."},
    {"transmitted_bytes", "transmitted_bytes", "Bytes the queue sent."},
    {"ecn_marked", "ecn_marked", "Frames marked CE."},
    {"trimmed", "trimmed", "Frames refused here whose cut copy went to a trim queue."},
    {"trimmed_sent", "trimmed_sent", "Trimmed copies this queue sent."},
    {"trimmed_dropped", "trimmed_dropped", "Trimmed copies this queue refused."},
    {"header_reserve", "header_reserve", "Trimmed copies admitted into the port's header reserve."},
    {"bounced", "bounced", "Frames whose cut copy went back to their sender."},
    {"deflected", "deflected",
     "Refused frames that went into a recirculation port (tofino-approx)."},
    {"trimmed_newest", "trimmed_newest",
     "Queued frames trimmed from the tail for an arrival (trim_newest)."},
    {"pool_full_stalled", "pool_full_stalled",
     "pool_full drops after waiting 5 ms for cells a descheduled egress thread held."},
};

constexpr Key kQueueGauges[] = {
    {"queued", "queued_frames", "Frames in the queue now."},
    {"occupancy_cells", "occupancy_cells", "Cells the queue holds now."},
    {"peak_cells", "peak_cells", "Most cells the queue held since start or counters.reset."},
    {"threshold_cells", "threshold_cells", "The policy's threshold for the queue now, in cells."},
};

constexpr Key kBufferGauges[] = {
    {"capacity_cells", "capacity_cells", "Cells of the shared buffer."},
    {"cell_bytes", "cell_bytes", "Bytes per cell."},
    {"occupancy_cells", "occupancy_cells", "Cells the shared buffer holds now."},
    {"peak_cells", "peak_cells", "Most cells held since start or counters.reset."},
    {"free_cells", "free_cells", "Cells of the shared buffer not held."},
    {"outside_cells", "outside_cells",
     "Cells held by frames outside the queues (in recirculation)."},
    {"header_reserve_cells", "header_reserve_cells", "Cells set aside for cut headers."},
};

constexpr Key kTofinoCounters[] = {
    {"ingress_trimmed", "ingress_trimmed", "Frames cut at ingress (tofino-approx)."},
    {"deflected", "deflected", "Frames deflected to the recirculation port (tofino-approx)."},
    {"deflect_dropped", "deflect_dropped", "Deflected frames dropped (tofino-approx)."},
    {"notifications", "notifications", "Queue-full notifications (tofino-approx)."},
    {"to_pessimistic", "to_pessimistic", "Changes to the pessimistic state (tofino-approx)."},
    {"to_half", "to_half", "Changes to the half-pessimistic state (tofino-approx)."},
    {"to_optimistic", "to_optimistic", "Changes to the optimistic state (tofino-approx)."},
};

const json& at(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

}  // namespace

std::string openmetrics_text(const json& stats) {
  Exposition e;
  const std::string sw = at(stats, "switch").is_string() ? stats["switch"].get<std::string>() : "";
  const Labels base = {{"switch", sw}};
  const json& policy = at(stats, "policy");
  if (at(policy, "name").is_string()) {
    Labels l = base;
    l.emplace_back("policy", policy["name"].get<std::string>());
    e.add("sharebuf_policy", "info", "The admission policy in force.", "_info", l, "1");
    const json& params = at(policy, "params");
    if (params.is_object()) {
      for (const auto& [k, v] : params.items()) {
        Labels pl = l;
        pl.emplace_back("param", k);
        e.gauge("sharebuf_policy_param", "The policy's numeric parameters.", pl, v);
      }
    }
  }
  const json& buffer = at(stats, "buffer");
  for (const Key& k : kBufferGauges)
    e.gauge(std::string("sharebuf_buffer_") + k.metric, k.help, base, at(buffer, k.json_key));
  const json& ports = at(stats, "ports");
  if (ports.is_array()) {
    for (const json& port : ports) {
      if (!at(port, "interface").is_string()) continue;
      Labels pl = base;
      pl.emplace_back("port", port["interface"].get<std::string>());
      for (const Key& k : kPortCounters)
        e.counter(std::string("sharebuf_port_") + k.metric, k.help, pl, at(port, k.json_key));
      e.gauge("sharebuf_port_rate_bps", "The port's line rate in bit/s (0: unshaped).", pl,
              at(port, "rate_bps"));
      const json& malformed = at(port, "malformed");
      if (malformed.is_object()) {
        for (const auto& [reason, n] : malformed.items()) {
          Labels l = pl;
          l.emplace_back("reason", reason);
          e.counter("sharebuf_port_malformed", "Malformed frames counted and dropped, by reason.",
                    l, n);
        }
      }
      const json& latency = at(port, "latency");
      if (latency.is_object()) {
        for (const auto& [hop, h] : latency.items()) {
          Labels l = pl;
          l.emplace_back("hop", hop);
          histogram(e, "sharebuf_hop_latency_seconds",
                    "Time a frame spent on each hop through the switch (docs/datapath-latency.md).",
                    l, at(h, "histogram"));
        }
      }
      const json& tofino = at(port, "tofino_approx");
      for (const Key& k : kTofinoCounters)
        e.counter(std::string("sharebuf_trim_") + k.metric, k.help, pl, at(tofino, k.json_key));
      const json& queues = at(port, "queues");
      if (!queues.is_array()) continue;
      for (const json& q : queues) {
        Labels ql = pl;
        ql.emplace_back("queue", value_text(at(q, "queue")).value_or("?"));
        for (const Key& k : kQueueCounters)
          e.counter(std::string("sharebuf_queue_") + k.metric, k.help, ql, at(q, k.json_key));
        const json& dropped = at(q, "dropped");
        if (dropped.is_object()) {
          for (const auto& [reason, n] : dropped.items()) {
            Labels l = ql;
            l.emplace_back("reason", reason);
            e.counter("sharebuf_queue_dropped", "Frames dropped, by reason.", l, n);
          }
        }
        for (const Key& k : kQueueGauges)
          e.gauge(std::string("sharebuf_queue_") + k.metric, k.help, ql, at(q, k.json_key));
        histogram(e, "sharebuf_queue_delay_seconds",
                  "Queueing delay, arrival to transmission, of the queue's frames.", ql,
                  at(q, "delay_histogram"));
      }
    }
  }
  const json& daemon = at(stats, "daemon");
  e.counter("sharebuf_log_lines_lost", "Log lines the daemon dropped rather than block.", base,
            at(daemon, "log_lines_lost"));
  return e.text();
}

}  // namespace sharebuf::mgmt

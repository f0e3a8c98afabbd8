// The switch's counters (datapath::SwitchControl::stats(), the stats file's JSON) in the
// OpenMetrics text format (https://prometheus.io/docs/specs/om/open_metrics_spec/), which
// Prometheus scrapes from sharebufd's [metrics] listen address (mgmt/metrics_server.h).
//
// A pure function of the JSON, so that the names and values a scraper sees are the stats file's,
// one for one (docs/metrics.md lists them): counters are the raw monotonic counters (never the
// control socket's counters.reset baseline, which Prometheus would read as a counter reset);
// occupancy, thresholds and rates are gauges; the queue delay and hop latency histograms are
// Prometheus histograms whose buckets are cumulative sums of the switch's own buckets (exact:
// every `le` is a power of two of nanoseconds, minus one, on which the switch's log-linear buckets
// begin and end).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sharebuf::mgmt {

// The Content-Type of openmetrics_text()'s answer.
inline constexpr std::string_view kOpenMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

// `stats` as SwitchControl::stats() writes it (with "daemon" if the daemon added it). Ends with
// "# EOF\n". Keys absent from `stats` give no sample; a value that is not a number is skipped.
std::string openmetrics_text(const nlohmann::json& stats);

}  // namespace sharebuf::mgmt

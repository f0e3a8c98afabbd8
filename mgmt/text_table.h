// Plain-text tables for the shell: sharebufctl's replies and sharebufd's --print-stats summary.
//
// The drop columns are built from each queue's "dropped" object, reason by reason, so a reason
// added to buffer::DropReason shows up without a change here; reasons no queue has used are left
// out (threshold and pool_full, the two every policy can cause, always shown) so that the table
// stays readable and a drop of any reason is still seen.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sharebuf::mgmt {

using TableRow = std::vector<std::string>;

// Columns left-aligned, two spaces apart, one header line; every line ends in '\n'.
std::string render_table(const TableRow& header, const std::vector<TableRow>& rows);

struct DropColumns {
  TableRow header;             // "drop:thr", "drop:full", ...
  std::vector<TableRow> rows;  // one per queue, in the order given
};

// Per queue: the drops by reason ("dropped"), and after pool_full's the count of them LQD refused
// after waiting out a descheduled egress thread ("pool_full_stalled"), where any queue has one.
DropColumns drop_columns(const std::vector<const nlohmann::json*>& queues);

// A number as a table shows it: floats to 3 significant digits, strings as they are.
std::string fmt_num(const nlohmann::json& v);
// A duration in ns, us or ms, whichever keeps it to a few digits.
std::string human_ns(uint64_t ns);

// The `queues` reply (one object per queue, with its "interface"), as `sharebufctl queues`
// shows it.
std::string queues_table(const nlohmann::json& queues);

// The daemon's counters (datapath::SwitchControl::stats(), the stats file) as two tables, ports
// then queues. Per queue: received = admitted + the drops before admission; admitted =
// transmitted + drop:pushed + queued.
std::string switch_stats_table(const nlohmann::json& stats);

}  // namespace sharebuf::mgmt

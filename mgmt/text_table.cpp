#include "mgmt/text_table.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string_view>
#include <utility>

namespace sharebuf::mgmt {

namespace {

using nlohmann::json;

// Short headers for the reasons in buffer/drop_reason.h; another reason is shown by its name.
constexpr std::pair<std::string_view, std::string_view> kShortReason[] = {
    {"threshold", "thr"},     {"pool_full", "full"},    {"prediction", "pred"},
    {"pushed_out", "pushed"}, {"unsupported", "unsup"}, {"meter", "meter"},
    {"reclaimed", "reclaim"},
};

std::string short_reason(const std::string& reason) {
  for (const auto& [name, shown] : kShortReason)
    if (name == reason) return std::string(shown);
  return reason;
}

// A count; anything else (a missing key, a negative or non-integer value) counts as none.
uint64_t count_of(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  return v.is_number_integer() && v.get<int64_t>() > 0 ? static_cast<uint64_t>(v.get<int64_t>())
                                                       : 0;
}

// An integer as it is (a JSON object built in the daemon may hold it signed), else "0".
std::string num(const json& v) {
  return v.is_number_integer() ? v.dump() : "0";
}

}  // namespace

std::string render_table(const TableRow& header, const std::vector<TableRow>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i)
    width[i] = header[i].size();
  for (const TableRow& r : rows)
    for (size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  std::string out;
  auto line = [&](const TableRow& r) {
    std::string l;
    for (size_t i = 0; i < r.size(); ++i) {
      if (i) l += "  ";
      l += r[i];
      if (i < width.size()) l.append(width[i] - r[i].size(), ' ');
    }
    // No blanks at the end of a line, whatever the last columns hold.
    l.erase(l.find_last_not_of(' ') + 1);
    out += l + "\n";
  };
  line(header);
  for (const TableRow& r : rows)
    line(r);
  return out;
}

DropColumns drop_columns(const std::vector<const json*>& queues) {
  // Every reason any queue reports, in buffer::DropReason's order (the JSON objects are sorted by
  // name), reasons this file does not know after them.
  std::vector<std::string> reasons;
  for (const json* q : queues)
    if (q->contains("dropped"))
      for (const auto& [reason, n] : (*q)["dropped"].items())
        if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
          reasons.push_back(reason);
  auto rank = [](const std::string& reason) {
    size_t i = 0;
    while (i < std::size(kShortReason) && kShortReason[i].first != reason)
      ++i;
    return i;
  };
  std::stable_sort(reasons.begin(), reasons.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  auto used = [&](auto&& count) {
    return std::any_of(queues.begin(), queues.end(), [&](const json* q) { return count(*q) > 0; });
  };
  const bool stalled =
      used([](const json& q) { return count_of(q.value("pool_full_stalled", json(0))); });

  DropColumns cols;
  cols.rows.resize(queues.size());
  for (const std::string& reason : reasons) {
    auto dropped = [&](const json& q) {
      return q.contains("dropped") ? count_of(q["dropped"].value(reason, json(0))) : 0;
    };
    if (reason != "threshold" && reason != "pool_full" && !used(dropped)) continue;
    cols.header.push_back("drop:" + short_reason(reason));
    for (size_t i = 0; i < queues.size(); ++i)
      cols.rows[i].push_back(std::to_string(dropped(*queues[i])));
    if (reason == "pool_full" && stalled) {
      cols.header.push_back("full:stalled");
      for (size_t i = 0; i < queues.size(); ++i)
        cols.rows[i].push_back(num(queues[i]->value("pool_full_stalled", json(0))));
    }
  }
  return cols;
}

std::string fmt_num(const json& v) {
  if (v.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.3g", v.get<double>());
    return b;
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string human_ns(uint64_t ns) {
  char b[32];
  if (ns < 10'000) {
    std::snprintf(b, sizeof(b), "%lluns", static_cast<unsigned long long>(ns));
  } else if (ns < 10'000'000) {
    std::snprintf(b, sizeof(b), "%.0fus", static_cast<double>(ns) / 1e3);
  } else {
    std::snprintf(b, sizeof(b), "%.0fms", static_cast<double>(ns) / 1e6);
  }
  return b;
}

std::string queues_table(const json& queues) {
  std::vector<const json*> qs;
  for (const json& q : queues)
    qs.push_back(&q);
  const DropColumns drops = drop_columns(qs);
  std::vector<TableRow> rows;
  for (size_t i = 0; i < qs.size(); ++i) {
    const json& q = *qs[i];
    TableRow r = {q["interface"].get<std::string>() + "/" + num(q["queue"]),
                  fmt_num(q["occupancy_cells"]),
                  fmt_num(q["threshold_cells"]),
                  fmt_num(q["peak_cells"]),
                  fmt_num(q["admitted"]),
                  fmt_num(q["transmitted"]),
                  fmt_num(q["queued"])};
    r.insert(r.end(), drops.rows[i].begin(), drops.rows[i].end());
    r.insert(r.end(), {fmt_num(q["ecn_marked"]), fmt_num(q.value("trimmed", json(0))),
                       fmt_num(q.value("deflected", json(0))),
                       human_ns(q.value("delay_p50_ns", uint64_t{0})),
                       human_ns(q.value("delay_p99_ns", uint64_t{0}))});
    rows.push_back(std::move(r));
  }
  TableRow header = {"queue", "occ", "thr", "peak", "admitted", "sent", "queued"};
  header.insert(header.end(), drops.header.begin(), drops.header.end());
  header.insert(header.end(), {"ecn", "trimmed", "defl", "p50", "p99"});
  return render_table(header, rows);
}

std::string switch_stats_table(const json& s) {
  std::string out = "policy " + s["policy"]["name"].get<std::string>() + "; buffer " +
                    num(s["buffer"]["capacity_cells"]) + " cells of " +
                    num(s["buffer"]["cell_bytes"]) + " B; peak " + num(s["buffer"]["peak_cells"]) +
                    " cells\n";
  std::vector<TableRow> ports;
  std::vector<const json*> queues;
  std::vector<std::string> names;
  for (const json& p : s["ports"]) {
    ports.push_back({p["interface"].get<std::string>(), num(p["rx_frames"]), num(p["tx_frames"]),
                     num(p["malformed_total"]), num(p["ring_drops"]), num(p["oversize"]),
                     num(p["filtered"])});
    for (const json& q : p["queues"]) {
      queues.push_back(&q);
      names.push_back(p["interface"].get<std::string>() + "/" + num(q["queue"]));
    }
  }
  out +=
      render_table({"port", "rx", "tx", "malformed", "ring_drops", "oversize", "filtered"}, ports);

  const DropColumns drops = drop_columns(queues);
  TableRow header = {"queue", "received", "admitted", "transmitted", "queued"};
  header.insert(header.end(), drops.header.begin(), drops.header.end());
  header.insert(header.end(), {"ecn", "peak", "threshold"});
  std::vector<TableRow> rows;
  for (size_t i = 0; i < queues.size(); ++i) {
    const json& q = *queues[i];
    TableRow r = {names[i], num(q["received"]), num(q["admitted"]), num(q["transmitted"]),
                  num(q["queued"])};
    r.insert(r.end(), drops.rows[i].begin(), drops.rows[i].end());
    r.insert(r.end(), {num(q["ecn_marked"]), num(q["peak_cells"]), num(q["threshold_cells"])});
    rows.push_back(std::move(r));
  }
  return out + render_table(header, rows);
}

}  // namespace sharebuf::mgmt

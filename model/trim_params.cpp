#include "model/trim_params.h"

#include <algorithm>

#include "model/ingress_meters.h"

namespace sharebuf::model {

const policies::ParamSpec& trim_spec(std::span<const policies::ParamSpec> table,
                                     std::string_view name) {
  for (const policies::ParamSpec& s : table) {
    if (s.name == name) return s;
  }
  throw std::logic_error("no trimming key '" + std::string(name) + "' is declared");
}

std::optional<OverflowAction> overflow_action(std::string_view name) noexcept {
  if (name == "drop") return OverflowAction::kDrop;
  if (name == "trim") return OverflowAction::kTrim;
  if (name == "return-to-sender") return OverflowAction::kReturnToSender;
  return std::nullopt;
}

bool trim_key_live(std::string_view key) noexcept {
  static constexpr std::string_view kStartOnly[] = {"pipelines", "line_rate", "header_reserve",
                                                    "header_full", "seed"};
  return std::find(std::begin(kStartOnly), std::end(kStartOnly), key) == std::end(kStartOnly);
}

void read_trim_params(const policies::ParamReader& r, TrimConfig& t, bool only_given) {
  auto take = [&](std::string_view key) { return !only_given || r.has(key); };
  if (take("trim_size")) t.size = static_cast<uint32_t>(r.integer("trim_size"));
  if (take("trim_fix_lengths")) t.fix_lengths = r.boolean("trim_fix_lengths");
  if (take("trim_dscp")) t.dscp = static_cast<int>(r.signed_integer("trim_dscp"));
  if (take("return_dscp")) t.return_dscp = static_cast<int>(r.signed_integer("return_dscp"));
  if (take("trim_newest")) t.trim_newest = r.number("trim_newest");
  if (take("seed")) t.seed = r.integer("seed");
  if (take("header_reserve")) t.header_reserve = static_cast<uint32_t>(r.integer("header_reserve"));
  if (take("header_full")) t.header_full_return = r.choice("header_full") == "return-to-sender";
  if (take("mode")) t.tofino_approx = r.choice("mode") == "tofino-approx";
  if (take("meters")) t.meters = *meter_variant(r.choice("meters"));
  if (take("meter_burst")) t.meter_burst_bytes = static_cast<uint32_t>(r.integer("meter_burst"));
  if (take("line_rate")) t.line_rate_bps = r.rate_bps("line_rate");
  if (take("pessimistic_share")) t.pessimistic_share = r.number("pessimistic_share");
  if (take("t0")) t.t0_ns = r.duration_ns("t0");
  if (take("t1")) t.t1_ns = r.duration_ns("t1");
  if (take("recirc_rate")) t.recirc_rate_bps = r.rate_bps("recirc_rate");
  if (take("recirc_queue")) t.recirc_queue_bytes = static_cast<uint32_t>(r.integer("recirc_queue"));
  if (take("recirc_latency")) t.recirc_latency_ns = r.duration_ns("recirc_latency");
}

nlohmann::json trim_params_json(const TrimConfig& t) {
  nlohmann::json out = {{"trim_size", t.size},
                        {"trim_fix_lengths", t.fix_lengths},
                        {"trim_dscp", t.dscp},
                        {"return_dscp", t.return_dscp},
                        {"trim_newest", t.trim_newest},
                        {"seed", t.seed},
                        {"header_reserve", t.header_reserve},
                        {"header_full", t.header_full_return ? "return-to-sender" : "drop"},
                        {"mode", t.tofino_approx ? "tofino-approx" : "ideal"},
                        {"meters", std::string(to_string(t.meters))},
                        {"meter_burst", t.meter_burst_bytes},
                        {"line_rate", std::to_string(t.line_rate_bps) + "bit"},
                        {"t0", std::to_string(t.t0_ns) + "ns"},
                        {"t1", std::to_string(t.t1_ns) + "ns"},
                        {"recirc_rate", std::to_string(t.recirc_rate_bps) + "bit"},
                        {"recirc_queue", t.recirc_queue_bytes},
                        {"recirc_latency", std::to_string(t.recirc_latency_ns) + "ns"}};
  out["pessimistic_share"] = t.pessimistic_share;
  return out;
}

std::string trim_params_markdown() {
  std::string out = "| table | key | default | meaning |\n|---|---|---|---|\n";
  bool first = true;
  for (const policies::ParamSpec& s : kTrimParams) {
    const std::string dflt =
        !s.default_doc.empty() ? std::string(s.default_doc)
        : s.type == policies::ParamType::kString || s.type == policies::ParamType::kDuration
            ? "`" + std::string(s.default_value) + "`"
            : std::string(s.default_value);
    const std::string range = policies::range_text(s);
    out += std::string(first ? "| `[trimming]` " : "| ") + "| `" + std::string(s.name) + "` | " +
           dflt + " | " + std::string(s.help) +
           (s.type == policies::ParamType::kBool ? "" : " (" + range + ")") +
           (trim_key_live(s.name) ? "" : "; at start only") + " |\n";
    first = false;
  }
  return out;
}

}  // namespace sharebuf::model

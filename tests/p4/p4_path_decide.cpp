// sharebuf-p4-path-decide: what the software decides for the paths p4testgen found through a
// P4 twin (tests/p4/testgen_check.py). Each case is one generated test of a data packet: the
// frame it sends (from its Ethernet header), the ingress port it enters (sharebufd's port
// index), and the registers the test writes before sending it (each queue's depth and Rem, as
// ingress last heard of them). The switch model built from the same configuration forwards and
// classifies the frame (model/switch_model.h: static MACs, the classifier, the queue of its
// class), and the configured policy decides on a view whose counters are those registers —
// sharebufd's `view = "probe"`, where the view is what the probes last wrote.
//
//   sharebuf-p4-path-decide CONFIG.toml CASES.json    -> one JSON line per case on stdout
//
// A case: {"test", "in_port", "frame" (hex), "depth": {"<register index>": cells},
// "rem": cells (signed); fb.p4's "n_high", "n_low" and "n_port": {"<port index>": queues};
// protean.p4's "incast_thr": {"<register index>": cells} and "long_thr": cells}. Out:
// {"test", "decision": "admit"|"drop"|"no-route"|"filtered"|"malformed", "port", "queue", "class",
// "cells", "depth", "remaining", "threshold"} or {"test", "skip": why} for register states the
// software's counters cannot hold (Rem above B, a depth above B).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "buffer/buffer_view.h"
#include "buffer/occupancy.h"
#include "config/switch_config_reader.h"
#include "model/frame_parser.h"
#include "model/switch_model.h"
#include "policies/protean.h"

namespace {

using nlohmann::json;
using namespace sharebuf;

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

json decide(model::SwitchModel& sw, const json& c) {
  json out = {{"test", c.at("test")}};
  const std::vector<uint8_t> frame = from_hex(c.at("frame").get<std::string>());
  const auto in_port = c.at("in_port").get<uint16_t>();
  const model::ParsedFrame parsed = model::parse_frame(frame);
  if (!parsed.ok()) {
    out["decision"] = "malformed";  // counted and dropped by sharebufd's parser
    out["error"] = model::to_string(parsed.error);
    return out;
  }
  const model::Forward fwd = sw.forward(parsed, in_port, 0);
  if (fwd.kind == model::Forward::Kind::kFlood) {
    out["decision"] = "no-route";  // flooded by sharebufd; the twin knows static MACs only
    return out;
  }
  if (fwd.kind == model::Forward::Kind::kFiltered) {
    out["decision"] = "filtered";  // the destination is on the ingress port: not sent back
    return out;
  }
  const uint8_t class_id = sw.classifier().classify(parsed, in_port);
  const model::SwitchModel::Copy copy =
      sw.copy_to(fwd.port, {.class_id = class_id,
                            .bytes = static_cast<uint32_t>(frame.size()),
                            .flow_hash = model::flow_hash(parsed),
                            .in_port = in_port});
  const buffer::BufferLayout& layout = sw.buffer().layout();
  const uint32_t capacity = layout.capacity_cells();
  const uint32_t port = layout.port_of(copy.ctx.queue);
  auto at = [&c](const char* reg, uint32_t index) -> int64_t {
    const json& r = c.value(reg, json::object());
    const std::string key = std::to_string(index);
    return r.contains(key) ? r[key].get<int64_t>() : 0;
  };
  const int64_t depth = at("depth", copy.ctx.queue);
  const int64_t rem = c.value("rem", int64_t{capacity});
  out["port"] = fwd.port;
  out["queue"] = copy.ctx.queue;
  out["class"] = class_id;
  out["cells"] = copy.ctx.cells;
  if (rem > capacity || depth > capacity) {
    out["skip"] = "registers the software's counters cannot hold (Rem or a depth above B)";
    return out;
  }
  // The registers as counters: the queue holds its depth, the buffer B - Rem (a negative Rem,
  // read as 0 by the program, is an occupancy above B: the view's Rem is 0 too); fb.p4's
  // congested-queue counts per priority group and per port are the view's active counts.
  buffer::Occupancy occ(layout);
  occ.queue[copy.ctx.queue].v = static_cast<uint32_t>(depth);
  occ.total = static_cast<uint32_t>(capacity - rem);
  occ.active_in_group[static_cast<uint32_t>(buffer::PriorityGroup::kLow)] =
      static_cast<int32_t>(c.value("n_low", 0));
  occ.active_in_group[static_cast<uint32_t>(buffer::PriorityGroup::kHigh)] =
      static_cast<int32_t>(c.value("n_high", 0));
  occ.active_on_port[port] = static_cast<int32_t>(at("n_port", port));
  const buffer::BufferView view(occ, layout);
  // protean.p4's incast threshold: what Algorithm 2 last left for the queue.
  if (auto* protean = dynamic_cast<policies::ProteanPolicy*>(&sw.policy())) {
    const int64_t thr = at("incast_thr", copy.ctx.queue);
    protean->set_incast_threshold(copy.ctx.queue, static_cast<double>(thr));
    out["incast_thr"] = thr;
    out["long_thr"] = c.value("long_thr", int64_t{0});
    // An empty queue of the incast role: the software holds it to alpha_incast x the Rem of now
    // (ProteanPolicy::incast_threshold), the program to what its last probe wrote.
    out["empty_incast"] =
        depth == 0 && sw.env().role_of_class(class_id) == policies::ProteanRole::kIncast;
  }
  const policies::Verdict v = sw.policy().admit(copy.ctx, view);
  out["decision"] = v.action == policies::Action::kAccept ? "admit" : "drop";
  out["depth"] = depth;
  out["remaining"] = view.remaining_cells();
  out["threshold"] = sw.policy().threshold_cells(copy.ctx.queue, class_id, view);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: sharebuf-p4-path-decide CONFIG.toml CASES.json\n";
    return 2;
  }
  try {
    model::SwitchModel sw(config::load_switch_config(argv[1]));
    std::ifstream in(argv[2]);
    const json cases = json::parse(in);
    for (const json& c : cases)
      std::cout << decide(sw, c).dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "sharebuf-p4-path-decide: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

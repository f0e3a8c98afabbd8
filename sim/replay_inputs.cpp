#include "sim/replay_inputs.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "model/classifier.h"
#include "model/frame_parser.h"
#include "model/mac_table.h"
#include "model/switch_model.h"

namespace sharebuf::sim {

using model::buffer_config;
using model::ClassConfig;
using model::Classifier;
using model::flow_hash;
using model::mac_from_bytes;
using model::MacAddress;
using model::parse_frame;
using model::ParsedFrame;
using model::policy_env;
using model::PortConfig;
using model::StaticMacConfig;
using model::SwitchConfig;

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' '))
      cell.pop_back();
    while (!cell.empty() && cell.front() == ' ')
      cell.erase(0, 1);
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::optional<uint64_t> to_uint(const std::string& s) {
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

void sort_by_time(std::vector<ReplayArrival>& v) {
  std::stable_sort(v.begin(), v.end(), [](const ReplayArrival& a, const ReplayArrival& b) {
    return a.time_ns < b.time_ns;
  });
}

}  // namespace

std::vector<ReplayArrival> read_arrivals_csv(const std::string& path, const SwitchConfig& config) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the arrivals CSV");
  std::string line;
  size_t lineno = 0;
  std::map<std::string, size_t> col;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const auto cells = split_csv(line);
    for (size_t i = 0; i < cells.size(); ++i)
      col[cells[i]] = i;
    break;
  }
  for (const char* need : {"time_ns", "port", "queue", "bytes"}) {
    if (!col.contains(need))
      throw std::runtime_error(
          path + ":" + std::to_string(lineno) +
          ": the header must name the columns time_ns, port, queue, bytes "
          "(and optionally class, in_port, flow_hash, first_bdp, ect); missing '" +
          need + "'");
  }
  const bool has_class = col.contains("class");
  const bool has_in_port = col.contains("in_port");
  const bool has_flow_hash = col.contains("flow_hash");
  const bool has_first_bdp = col.contains("first_bdp");
  const bool has_ect = col.contains("ect");
  const buffer::BufferConfig bc = buffer_config(config);
  const buffer::BufferLayout layout(bc.capacity_cells, bc.cell_bytes, bc.ports);
  const policies::PolicyEnv env = policy_env(config, layout);
  std::vector<ReplayArrival> out;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const auto cells = split_csv(line);
    auto where = [&](const char* column) {
      return path + ":" + std::to_string(lineno) + ": column '" + column + "'";
    };
    auto cell = [&](const char* column) -> const std::string& {
      const size_t i = col.at(column);
      if (i >= cells.size())
        throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " +
                                 std::to_string(cells.size()) + " fields, no '" + column + "'");
      return cells[i];
    };
    ReplayArrival a;
    const auto t = to_uint(cell("time_ns"));
    if (!t)
      throw std::runtime_error(where("time_ns") + ": '" + cell("time_ns") +
                               "' is not a time in ns");
    a.time_ns = *t;
    // A port by index or interface name.
    auto port_in = [&](const char* column) -> uint32_t {
      uint64_t port = 0;
      if (const auto p = to_uint(cell(column))) {
        port = *p;
      } else {
        const auto it = std::find_if(config.ports.begin(), config.ports.end(),
                                     [&](const PortConfig& pc) { return pc.name == cell(column); });
        if (it == config.ports.end())
          throw std::runtime_error(where(column) + ": no port '" + cell(column) +
                                   "' in the config");
        port = static_cast<uint64_t>(it - config.ports.begin());
      }
      if (port >= layout.num_ports())
        throw std::runtime_error(where(column) + ": port " + std::to_string(port) +
                                 " does not exist (" + std::to_string(layout.num_ports()) +
                                 " ports)");
      return static_cast<uint32_t>(port);
    };
    const uint32_t port = port_in("port");
    if (has_in_port) a.in_port = static_cast<uint16_t>(port_in("in_port"));
    const auto q = to_uint(cell("queue"));
    if (!q || *q >= layout.queues_on_port(port))
      throw std::runtime_error(where("queue") + ": '" + cell("queue") +
                               "' is not a queue of port " + std::to_string(port));
    a.queue = layout.queue_id(port, static_cast<uint32_t>(*q));
    const auto b = to_uint(cell("bytes"));
    if (!b || *b == 0 || *b > buffer::BufferLayout::kMaxFrameBytes)
      throw std::runtime_error(where("bytes") + ": '" + cell("bytes") +
                               "' is not a frame size (1.." +
                               std::to_string(buffer::BufferLayout::kMaxFrameBytes) + ")");
    a.bytes = static_cast<uint32_t>(*b);
    if (has_class) {
      const std::string& c = cell("class");
      if (const auto id = to_uint(c); id && *id < config.classes.size()) {
        a.class_id = static_cast<uint8_t>(*id);
      } else {
        const auto it = std::find_if(config.classes.begin(), config.classes.end(),
                                     [&](const ClassConfig& cc) { return cc.traffic.name == c; });
        if (it == config.classes.end())
          throw std::runtime_error(where("class") + ": no class '" + c + "'");
        a.class_id = static_cast<uint8_t>(it - config.classes.begin());
      }
    } else {
      a.class_id = env.class_of_queue(a.queue);
    }
    if (has_flow_hash) {
      const auto h = to_uint(cell("flow_hash"));
      if (!h || *h > UINT32_MAX)
        throw std::runtime_error(where("flow_hash") + ": '" + cell("flow_hash") +
                                 "' is not a 32-bit flow hash");
      a.flow_hash = static_cast<uint32_t>(*h);
    }
    if (has_first_bdp) {
      // The sender's tag as recorded: empty when the frame carried none.
      const std::string& f = cell("first_bdp");
      if (f == "1") {
        a.first_bdp = policies::FirstBdp::kYes;
      } else if (f == "0") {
        a.first_bdp = policies::FirstBdp::kNo;
      } else if (!f.empty()) {
        throw std::runtime_error(where("first_bdp") + ": '" + f +
                                 "' is not 0, 1 or empty (no tag)");
      }
    }
    if (has_ect) {
      const std::string& e = cell("ect");
      if (e != "0" && e != "1" && !e.empty())
        throw std::runtime_error(where("ect") + ": '" + e + "' is not 0, 1 or empty");
      a.ect = e == "1";
    }
    out.push_back(a);
  }
  sort_by_time(out);
  return out;
}

uint64_t default_end_ns(const std::vector<ReplayArrival>& arrivals) noexcept {
  constexpr uint64_t kDrain = 10'000'000;
  const uint64_t last = arrivals.empty() ? 0 : arrivals.back().time_ns;
  return last > UINT64_MAX - kDrain ? UINT64_MAX : last + kDrain;
}

std::vector<ReplayArrival> read_arrivals_pcap(const std::vector<PcapInput>& inputs,
                                              const SwitchConfig& config, PcapReadStats& stats) {
  struct Frame {
    uint64_t time_ns;
    size_t input;
    std::vector<uint8_t> bytes;
    uint32_t wire_len;
  };
  std::vector<Frame> frames;
  for (size_t i = 0; i < inputs.size(); ++i) {
    char err[PCAP_ERRBUF_SIZE] = {};
    pcap_t* p = pcap_open_offline_with_tstamp_precision(inputs[i].path.c_str(),
                                                        PCAP_TSTAMP_PRECISION_NANO, err);
    if (p == nullptr) throw std::runtime_error(inputs[i].path + ": " + err);
    if (const int link = pcap_datalink(p); link != DLT_EN10MB) {
      pcap_close(p);
      throw std::runtime_error(inputs[i].path + ": not an Ethernet capture (link type " +
                               std::to_string(link) + ")");
    }
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    for (uint64_t record = 1;; ++record) {
      const int rc = pcap_next_ex(p, &h, &data);
      if (rc == PCAP_ERROR_BREAK) break;
      if (rc != 1) {
        const std::string msg = pcap_geterr(p);
        pcap_close(p);
        throw std::runtime_error(inputs[i].path + ": record " + std::to_string(record) + ": " +
                                 msg);
      }
      frames.push_back({static_cast<uint64_t>(h->ts.tv_sec) * 1'000'000'000ull +
                            static_cast<uint64_t>(h->ts.tv_usec),
                        i, std::vector<uint8_t>(data, data + h->caplen), h->len});
    }
    pcap_close(p);
  }
  std::stable_sort(frames.begin(), frames.end(),
                   [](const Frame& a, const Frame& b) { return a.time_ns < b.time_ns; });
  const Classifier classifier(config);
  const buffer::BufferConfig bc = buffer_config(config);
  const buffer::BufferLayout layout(bc.capacity_cells, bc.cell_bytes, bc.ports);
  // Forwarding as the live switch forwards (model::forward_frame, SwitchModel's): learned sources
  // (frames of files given @PORT), static MACs, and unknown destinations flooded.
  model::MacTable macs(config.mac_table_size, config.mac_ageing_ns);
  for (const StaticMacConfig& m : config.static_macs)
    macs.add_static(m.mac, m.port);
  const model::FabricTable fabric(config);
  const uint32_t ports = layout.num_ports();
  std::vector<ReplayArrival> out;
  const uint64_t t0 = frames.empty() ? 0 : frames.front().time_ns;
  for (const Frame& f : frames) {
    ++stats.frames;
    const ParsedFrame parsed = parse_frame(f.bytes);
    if (!parsed.ok()) {
      ++stats.malformed;
      continue;
    }
    const uint64_t t = f.time_ns - t0;
    const std::optional<uint16_t> in = inputs[f.input].in_port;
    model::Forward fw;
    if (in) {
      fw = model::forward_frame(macs, fabric, parsed, *in, t, ports);
    } else {
      // Its ingress unknown: nothing learned; a routed or known destination is unicast, else
      // flooded to every port that is not a fabric port.
      fw.flood = fabric.flood_mask(model::MacTable::kNoPort, ports);
      if (!parsed.dst_is_group()) {
        const MacAddress dst = mac_from_bytes(parsed.dst_mac);
        const std::span<const uint16_t> group = fabric.route(dst);
        const uint16_t out_port = !group.empty()
                                      ? model::FabricTable::pick(group, flow_hash(parsed))
                                      : macs.lookup(dst, t);
        if (out_port != model::MacTable::kNoPort && out_port < ports)
          fw = {model::Forward::Kind::kUnicast, out_port, 0};
      }
    }
    if (fw.kind == model::Forward::Kind::kFiltered) {
      ++stats.filtered;
      continue;
    }
    const uint8_t class_id = classifier.classify(parsed, in.value_or(0));
    auto copy_to = [&](uint32_t port) {
      const uint32_t k = std::min(classifier.queue_of(class_id), layout.queues_on_port(port) - 1);
      out.push_back({.time_ns = t,
                     .queue = layout.queue_id(port, k),
                     .bytes = std::max<uint32_t>(f.wire_len, 1),
                     .class_id = class_id,
                     .flow_hash = flow_hash(parsed),
                     .in_port = in.value_or(0),
                     .ect = parsed.ect()});
    };
    if (fw.kind == model::Forward::Kind::kUnicast) {
      copy_to(fw.port);
      continue;
    }
    // Flooded: one copy per port of the flood, in port order (as the RX worker admits them).
    ++stats.flooded;
    for (uint32_t p = 0; p < ports; ++p)
      if ((fw.flood >> p) & 1u) copy_to(p);
  }
  return out;
}

}  // namespace sharebuf::sim

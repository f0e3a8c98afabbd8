#include "sim/ns3/switch_facade.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "buffer/shared_buffer.h"
#include "config/overrides.h"
#include "config/switch_config_reader.h"
#include "config/toml_reader.h"
#include "model/admission_step.h"
#include "model/departure_step.h"
#include "model/switch_config.h"
#include "model/switch_model.h"
#include "policies/registry.h"
#include "sim/ns3/unmodelled.h"
#include "sim/replay.h"

namespace sharebuf::sim {
namespace {

policies::FirstBdp first_bdp(int8_t tag) {
  if (tag < 0) return policies::FirstBdp::kUnknown;
  return tag != 0 ? policies::FirstBdp::kYes : policies::FirstBdp::kNo;
}

class SwitchImpl final : public SwitchFacade, private model::OverflowStep::Sink {
 public:
  explicit SwitchImpl(const model::SwitchConfig& cfg)
      : model_(cfg),
        buffer_(model_.buffer()),
        cache_(buffer_.pool()),
        overflow_(model_.overflow_step(0, /*synthetic=*/true)) {
    // Room for the victims of one push-out (copies, made under the push-out lock).
    overflow_.reserve(buffer::BufferLayout::kMaxFrameBytes);
  }

  uint32_t ports() const override { return model_.ports(); }
  uint64_t port_rate_bps(uint32_t port) const override {
    return model_.config().ports[port].rate_bps;
  }
  std::string policy_name() const override { return std::string(model_.policy().name()); }

  Outcome arrive(const Arrival& a, uint64_t now_ns, uint64_t handle) override {
    Outcome out;
    const buffer::BufferLayout& layout = buffer_.layout();
    const uint32_t port = a.port;
    if (a.in_port >= static_cast<int32_t>(layout.num_ports()))
      throw std::logic_error("SwitchFacade: ingress port " + std::to_string(a.in_port) +
                             " of a switch of " + std::to_string(layout.num_ports()) + " ports");
    const uint16_t in_port = static_cast<uint16_t>(std::max<int32_t>(a.in_port, 0));
    const uint32_t bytes =
        std::clamp<uint32_t>(a.bytes, sizeof handle, buffer::BufferLayout::kMaxFrameBytes);
    model::ParsedFrame parsed{};
    parsed.ip_version = 4;
    parsed.l3_offset = 14;
    parsed.dscp = a.dscp;
    const uint8_t class_id = model_.classifier().classify(parsed, static_cast<uint16_t>(port));
    // The model's ingress step: the class's queue on this port, the ECN decision, the context.
    if (a.in_port < 0 && model_.trim().overflow_of(class_id) != model::OverflowAction::kDrop)
      throw std::logic_error(
          "SwitchFacade: class " + model_.config().classes.at(class_id).traffic.name +
          " trims or returns its refused packets, which needs each packet's ingress port (a "
          "cut copy may go back out of it): deliver arrivals through "
          "SharebufSwitch::DeferArrival with their ingress device, as sharebuf-sim's "
          "FabricRouting does");
    const model::SwitchModel::Copy copy =
        model_.copy_to(port, {.class_id = class_id,
                              .bytes = bytes,
                              .ect = a.ect,
                              .flow_hash = a.flow_hash,
                              .in_port = in_port,
                              .now_ns = now_ns,
                              .first_bdp = first_bdp(a.first_bdp)});
    const uint32_t k = copy.ctx.queue - layout.first_queue(port);
    // The frame's bytes in the buffer: the caller's handle, then zeros.
    std::memcpy(frame_.data(), &handle, sizeof handle);
    policies::Policy& policy = model_.policy();
    const uint64_t deflected_before = deflected_count(copy.ctx.queue);
    arrival_ = {handle, port, &out.copies};
    const model::OverflowStep::Result step = overflow_.admit(
        policy, model::ingress_view(policy, buffer_, now_ns), cache_, copy.ctx,
        model::OverflowStep::Frame{std::span<const uint8_t>(frame_.data(), bytes), nullptr},
        copy.meta, in_port, now_ns, *this);
    arrival_ = {};
    const model::AdmissionOutcome& r = step.outcome;
    out.deflected = deflected_count(copy.ctx.queue) != deflected_before;
    const buffer::EvictedFrames& evicted = overflow_.evicted();
    for (const buffer::EvictedFrames::Frame& f : evicted.frames) {
      uint64_t h = 0;
      std::memcpy(&h, evicted.frame_bytes(f).data(), sizeof h);
      out.evicted.push_back({h, buffer::to_string(f.reason).data()});
      // A copy cut from an evicted frame goes back only if it left another port than the frame's.
      for (Copy& c : out.copies)
        if (c.of == h) c.returned = c.port != layout.port_of(f.desc.queue);
    }
    if (evicted.skipped != 0)
      throw std::logic_error("SwitchFacade: a push-out evicted more frames than reserved for");
    out.admitted = r.enqueued;
    out.queue = r.queue - layout.first_queue(port);  // k, or where IB's DPP sent it
    out.mark_ce = model_.admitted(copy, r);
    if (!r.enqueued) out.drop_reason = std::string(buffer::to_string(r.reason));
    if (recording_) {
      for (const Outcome::Evicted& e : out.evicted) {
        if (auto it = seq_of_.find(e.handle); it != seq_of_.end()) {
          fates_[it->second] = 1;
          seq_of_.erase(it);
        }
      }
      arrivals_ +=
          std::to_string(now_ns) + ',' + std::to_string(port) + ',' + std::to_string(k) + ',' +
          std::to_string(bytes) + ',' + std::to_string(class_id) + ',' +
          std::to_string(a.flow_hash) + ',' + (a.first_bdp < 0 ? "" : std::to_string(a.first_bdp)) +
          ',' + (a.ect ? "1" : "0") + ',' + (a.in_port < 0 ? "" : std::to_string(a.in_port)) + '\n';
      fates_.push_back(r.enqueued ? 0 : 1);
      if (r.enqueued) seq_of_[handle] = fates_.size() - 1;
    }
    return out;
  }

  void record() override { recording_ = true; }
  std::string arrivals_csv() const override {
    return "time_ns,port,queue,bytes,class,flow_hash,first_bdp,ect,in_port\n" + arrivals_;
  }
  std::string fates_csv(const std::string& label) const override {
    std::string out = "seq," + label + '\n';
    for (size_t i = 0; i < fates_.size(); ++i)
      out += std::to_string(i) + ',' + std::to_string(fates_[i]) + '\n';
    return out;
  }

  bool next(uint32_t port, uint64_t now_ns, Departure* out) override {
    std::array<std::byte, sizeof(uint64_t)> id{};
    const std::optional<model::Departed> d =
        model::depart_next(buffer_, cache_, model_.port(port).scheduler, model_.policy(), port,
                           now_ns, model_.config().ports[port].rate_bps, id);
    if (!d) return false;
    std::memcpy(&out->handle, id.data(), sizeof out->handle);
    out->bytes = d->desc.bytes;
    out->queue = d->queue - buffer_.layout().first_queue(port);
    if (recording_) {
      seq_of_.erase(out->handle);  // transmitted: its fate stays 0
      departures_ += ',' + std::to_string(now_ns) + ',' + std::to_string(d->queue) + ',' +
                     std::to_string(d->desc.arrival_ns) + ',' + std::to_string(d->desc.bytes) +
                     ',' + ((d->desc.flags & buffer::kFlagTrimmed) != 0 ? "1" : "0") + ',' +
                     ((d->desc.flags & buffer::kFlagEcnMarked) != 0 ? "1" : "0") + '\n';
    }
    return true;
  }

  uint64_t next_release_ns() const override {
    return model_.tofino().any_deflected() ? model_.tofino().next_departure_ns() : UINT64_MAX;
  }

  std::vector<Copy> release(uint64_t now_ns, std::vector<uint64_t>* left) override {
    std::vector<Copy> copies;
    arrival_ = {0, 0, &copies};
    overflow_.release_deflected(model_.policy(), cache_, now_ns, *this);
    arrival_ = {};
    if (left != nullptr) {
      for (const model::TofinoApprox::Deflected& d : overflow_.released()) {
        uint64_t h = 0;
        if (d.cut.size() >= sizeof h) std::memcpy(&h, d.cut.data(), sizeof h);
        left->push_back(h);
      }
    }
    return copies;
  }

  std::string departures_csv(const std::string& label) const override {
    std::string out = std::string(kDeparturesHeader) + "\n";
    for (size_t at = 0; at < departures_.size();) {
      const size_t nl = departures_.find('\n', at);
      out += label;
      out.append(departures_, at, nl + 1 - at);
      at = nl + 1;
    }
    return out;
  }

  uint64_t transmit_ns(uint32_t port, uint32_t bytes) const override {
    return model::transmit_ns(bytes, model_.config().ports[port].rate_bps);
  }

  uint32_t queues(uint32_t port) const override { return buffer_.layout().queues_on_port(port); }
  uint32_t queue_cells(uint32_t port, uint32_t k) const override {
    return buffer_.state().queue_cells(buffer_.layout().queue_id(port, k));
  }
  uint32_t total_cells() const override { return buffer_.state().total_cells(); }
  uint32_t capacity_cells() const override { return buffer_.layout().capacity_cells(); }
  uint32_t cell_bytes() const override { return buffer_.layout().cell_bytes(); }
  uint32_t threshold_cells(uint32_t port, uint32_t k, uint64_t now_ns) const override {
    const uint32_t q = buffer_.layout().queue_id(port, k);
    return model_.policy().threshold_cells(
        q, buffer_.stats(q).shown_class(model_.env().class_of_queue(q)), buffer_.view(now_ns));
  }
  QueueCounters counters(uint32_t port, uint32_t k) const override {
    const buffer::QueueStats& s = buffer_.stats(buffer_.layout().queue_id(port, k));
    QueueCounters c{.received = s.received_pkts.load(),
                    .admitted = s.enqueued_pkts.load(),
                    .transmitted = s.dequeued_pkts.load(),
                    .ecn_marked = s.ecn_marked_pkts.load(),
                    .refused = s.dropped_before_enqueue(),
                    .pushed_out = s.evicted()};
    return c;
  }
  std::string counters_json() const override {
    nlohmann::json out = nlohmann::json::array();
    const buffer::BufferLayout& layout = buffer_.layout();
    for (uint32_t q = 0; q < layout.num_queues(); ++q) {
      const buffer::QueueStats& s = buffer_.stats(q);
      nlohmann::json dropped = nlohmann::json::object();
      for (size_t r = 1; r < buffer::kNumDropReasons; ++r)
        dropped[std::string(buffer::kDropReasonNames[r])] = s.dropped_pkts[r].load();
      out.push_back({{"port", model_.config().ports[layout.port_of(q)].name},
                     {"queue", q - layout.first_queue(layout.port_of(q))},
                     {"received", s.received_pkts.load()},
                     {"admitted", s.enqueued_pkts.load()},
                     {"transmitted", s.dequeued_pkts.load()},
                     {"ecn_marked", s.ecn_marked_pkts.load()},
                     {"dropped", dropped},
                     {"peak_cells", buffer_.state().peak_queue_cells(q)},
                     // Trimming, as the live switch and the replay count it (sim/replay.h).
                     {"trimmed", s.trimmed_pkts.load()},
                     {"bounced", s.bounced_pkts.load()},
                     {"deflected", s.deflected_pkts.load()},
                     {"trimmed_newest", s.trimmed_newest_pkts.load()},
                     {"trimmed_dropped", s.trimmed_dropped_pkts.load()},
                     {"header_reserve", s.header_reserve_pkts.load()}});
    }
    return out.dump();
  }

 private:
  // OverflowStep::Sink: a cut copy was queued at the tail of `q`. Its bytes begin with the
  // handle of the frame it was cut from (a synthetic cut keeps the first trim_size bytes); it
  // gets a handle of its own there, so that next() names it, not its original.
  void enqueued(uint32_t q, bool copy) override {
    if (!copy || arrival_.copies == nullptr) return;
    const buffer::BufferLayout& layout = buffer_.layout();
    const uint32_t tail = buffer_.queue(q).peek_tail();
    std::byte* head = buffer_.pool().cell_data(tail);
    Copy c;
    std::memcpy(&c.of, head, sizeof c.of);
    c.handle = kCopyHandle | next_copy_++;
    std::memcpy(head, &c.handle, sizeof c.handle);
    c.port = layout.port_of(q);
    c.queue = q - layout.first_queue(c.port);
    c.bytes = buffer_.pool().descriptor(tail).bytes;
    // The original's egress port is the arrival's (a frame pushed out for it: arrive() fixes
    // that); a copy that leaves by another port was returned.
    c.returned = c.of == arrival_.handle && c.port != arrival_.port;
    const model::TrimSettings& t = model_.trim();
    const int toward = t.dscp_toward[c.port].load(std::memory_order_relaxed);
    c.dscp = c.returned    ? t.return_dscp.load(std::memory_order_relaxed)
             : toward >= 0 ? toward
                           : t.dscp.load(std::memory_order_relaxed);
    arrival_.copies->push_back(c);
  }

  uint64_t deflected_count(uint32_t q) const {
    return buffer_.stats(q).deflected_pkts.load(std::memory_order_relaxed);
  }

  // A copy's handle: the top bit set, so it never meets one of the caller's.
  static constexpr uint64_t kCopyHandle = uint64_t{1} << 63;
  struct Current {
    uint64_t handle = 0;  // the arrival being admitted (0: a release)
    uint32_t port = 0;    // its egress port
    std::vector<Copy>* copies = nullptr;
  } arrival_;
  uint64_t next_copy_ = 1;
  std::string departures_;  // recorded transmissions, without their label

  model::SwitchModel model_;  // the switch every engine runs
  buffer::SharedBuffer& buffer_;
  buffer::CellCache cache_;
  model::OverflowStep overflow_;
  std::array<uint8_t, buffer::BufferLayout::kMaxFrameBytes> frame_{};
  bool recording_ = false;
  std::string arrivals_;
  std::vector<uint8_t> fates_;
  std::unordered_map<uint64_t, size_t> seq_of_;  // handle -> arrival number, while queued
};

}  // namespace

void refuse_unmodelled(const model::SwitchConfig& config, const std::string& source) {
  if (config.buffer.probe_bytes != 0) {
    throw common::ConfigError(source +
                              ": [buffer] probe_bytes: the ns-3 switch does not charge probes "
                              "to its links (sharebufd and sharebuf-replay do); remove it");
  }
}

namespace {

std::unique_ptr<SwitchFacade> build(const model::SwitchConfig& cfg, const std::string& source) {
  refuse_unmodelled(cfg, source);  // a std::runtime_error naming source and class
  for (const model::PortConfig& p : cfg.ports) {
    if (p.rate_bps == 0)
      throw std::runtime_error(source + ": port '" + p.name +
                               "' has no rate; a simulated port needs one (key 'rate')");
  }
  return std::make_unique<SwitchImpl>(cfg);
}

}  // namespace

std::unique_ptr<SwitchFacade> SwitchFacade::from_toml(const std::string& text,
                                                      const std::string& source) {
  model::SwitchConfig cfg;
  try {
    cfg = config::parse_switch_config(text, source);
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what());
  }
  return build(cfg, source);
}

std::unique_ptr<SwitchFacade> SwitchFacade::from_spec(const Spec& spec) {
  model::SwitchConfig cfg;
  try {
    toml::table root = toml::parse(spec.config, spec.source);
    for (const std::string& o : spec.overrides)
      config::apply_override(root, o, spec.override_origin);
    // No [[ports]]: the node's, from the [ports] table of settings (or none).
    const toml::node* ports = root.get("ports");
    if (ports == nullptr || ports->is_table()) {
      const toml::table tmpl = ports != nullptr ? *ports->as_table() : toml::table{};
      for (const char* k : {"interface", "rate"}) {
        if (tmpl.contains(k))
          throw std::runtime_error(spec.source + ": [ports] key '" + k +
                                   "': set by the node's devices");
      }
      toml::array made;
      for (size_t i = 0; i < spec.port_rates_bps.size(); ++i) {
        toml::table port = tmpl;
        port.insert_or_assign("interface", "port" + std::to_string(i));
        port.insert_or_assign("rate", static_cast<int64_t>(spec.port_rates_bps[i]));
        made.push_back(std::move(port));
      }
      root.insert_or_assign("ports", std::move(made));
    }
    cfg = config::read_switch_config(root, spec.source);
    config::validate_switch_config(cfg);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(config::location(spec.source, e.source()) + ": " +
                             std::string(e.description()));
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what());
  }
  return build(cfg, spec.source);
}

}  // namespace sharebuf::sim

#include "sim/ns3/switch_facade.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "buffer/shared_buffer.h"
#include "datapath/admission_step.h"
#include "datapath/classifier.h"
#include "datapath/scheduler.h"
#include "datapath/switch_config.h"
#include "mgmt/config_loader.h"
#include "policies/registry.h"
#include "sim/departure_step.h"
#include "sim/replay_inputs.h"

namespace sharebuf::sim {
namespace {

class SwitchImpl final : public SwitchFacade {
 public:
  explicit SwitchImpl(const datapath::SwitchConfig& cfg)
      : config_(cfg),
        buffer_(datapath::buffer_config(cfg)),
        cache_(buffer_.pool()),
        env_(datapath::policy_env(cfg, buffer_.layout())),
        classifier_(cfg) {
    for (const datapath::PortConfig& p : cfg.ports)
      schedulers_.emplace_back(p.scheduler, p.num_queues, p.weights);
    policy_ = policies::make_policy(cfg.policy, cfg.policy_params, env_);
    policy_->on_install(buffer_.exact_view());
    buffer_.set_policy_uses_probes(policy_->uses_probes(), 0);
    // Room for the victims of one push-out (copies, made under the push-out lock).
    evicted_.reserve(64 * size_t{buffer::BufferLayout::kMaxFrameBytes}, 64);
  }

  uint32_t ports() const override { return static_cast<uint32_t>(config_.ports.size()); }
  uint64_t port_rate_bps(uint32_t port) const override { return config_.ports[port].rate_bps; }
  std::string policy_name() const override { return std::string(policy_->name()); }

  Outcome arrive(uint32_t port, uint32_t bytes, uint8_t dscp, bool ect, uint32_t flow_hash,
                 uint64_t now_ns, uint64_t handle) override {
    Outcome out;
    const buffer::BufferLayout& layout = buffer_.layout();
    bytes = std::clamp<uint32_t>(bytes, sizeof handle, buffer::BufferLayout::kMaxFrameBytes);
    datapath::ParsedFrame parsed{};
    parsed.ip_version = 4;
    parsed.l3_offset = 14;
    parsed.dscp = dscp;
    const uint8_t class_id = classifier_.classify(parsed, static_cast<uint16_t>(port));
    const uint32_t k = std::min(classifier_.queue_of(class_id), layout.queues_on_port(port) - 1);
    const uint32_t q = layout.queue_id(port, k);
    const uint32_t ecn_k = classifier_.ecn_threshold_cells(class_id);
    out.mark_ce = ecn_k != 0 && ect && buffer_.state().queue_cells(q) > ecn_k;
    const policies::ArrivalContext ctx{.now_ns = now_ns,
                                       .queue = q,
                                       .port = static_cast<uint16_t>(port),
                                       .class_id = class_id,
                                       .cells = layout.cells_for(bytes),
                                       .bytes = bytes,
                                       .flow_hash = flow_hash};
    const buffer::FrameMeta meta{.arrival_ns = now_ns, .class_id = class_id};
    // The frame's bytes in the buffer: the caller's handle, then zeros.
    std::memcpy(frame_.data(), &handle, sizeof handle);
    evicted_.clear();
    const datapath::AdmissionOutcome r = datapath::admit_frame(
        *policy_, buffer_, cache_, datapath::ingress_view(*policy_, buffer_, now_ns), ctx,
        std::span<const std::byte>(frame_.data(), bytes), meta, &evicted_);
    for (const buffer::EvictedFrames::Frame& f : evicted_.frames) {
      uint64_t h = 0;
      std::memcpy(&h, evicted_.frame_bytes(f).data(), sizeof h);
      out.evicted.push_back(h);
    }
    if (evicted_.skipped != 0)
      throw std::logic_error("SwitchFacade: a push-out evicted more frames than reserved for");
    out.admitted = r.enqueued;
    if (r.enqueued && out.mark_ce)
      buffer_.stats(q).ecn_marked_pkts.fetch_add(1, std::memory_order_relaxed);
    if (!r.enqueued) {
      out.mark_ce = false;
      out.drop_reason = std::string(buffer::to_string(r.reason));
    }
    if (recording_) {
      for (uint64_t h : out.evicted) {
        if (auto it = seq_of_.find(h); it != seq_of_.end()) {
          fates_[it->second] = 1;
          seq_of_.erase(it);
        }
      }
      arrivals_ += std::to_string(now_ns) + ',' + std::to_string(port) + ',' + std::to_string(k) +
                   ',' + std::to_string(bytes) + ',' + std::to_string(class_id) + '\n';
      fates_.push_back(r.enqueued ? 0 : 1);
      if (r.enqueued) seq_of_[handle] = fates_.size() - 1;
    }
    return out;
  }

  void record() override { recording_ = true; }
  std::string arrivals_csv() const override {
    return "time_ns,port,queue,bytes,class\n" + arrivals_;
  }
  std::string fates_csv(const std::string& label) const override {
    std::string out = "seq," + label + '\n';
    for (size_t i = 0; i < fates_.size(); ++i)
      out += std::to_string(i) + ',' + std::to_string(fates_[i]) + '\n';
    return out;
  }

  bool next(uint32_t port, uint64_t now_ns, Departure* out) override {
    std::array<std::byte, sizeof(uint64_t)> id{};
    const std::optional<Departed> d = depart_one(buffer_, cache_, schedulers_[port], *policy_, port,
                                                 now_ns, config_.ports[port].rate_bps, id);
    if (!d) return false;
    std::memcpy(&out->handle, id.data(), sizeof out->handle);
    out->bytes = d->desc.bytes;
    if (recording_) seq_of_.erase(out->handle);  // transmitted: its fate stays 0
    return true;
  }

  uint64_t transmit_ns(uint32_t port, uint32_t bytes) const override {
    return sim::transmit_ns(bytes, config_.ports[port].rate_bps);
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
    return policy_->threshold_cells(q, buffer_.stats(q).shown_class(env_.class_of_queue(q)),
                                    buffer_.view(now_ns));
  }
  std::string counters_json() const override {
    nlohmann::json out = nlohmann::json::array();
    const buffer::BufferLayout& layout = buffer_.layout();
    for (uint32_t q = 0; q < layout.num_queues(); ++q) {
      const buffer::QueueStats& s = buffer_.stats(q);
      nlohmann::json dropped = nlohmann::json::object();
      for (size_t r = 1; r < buffer::kNumDropReasons; ++r)
        dropped[std::string(buffer::kDropReasonNames[r])] = s.dropped_pkts[r].load();
      out.push_back({{"port", config_.ports[layout.port_of(q)].name},
                     {"queue", q - layout.first_queue(layout.port_of(q))},
                     {"received", s.received_pkts.load()},
                     {"admitted", s.enqueued_pkts.load()},
                     {"transmitted", s.dequeued_pkts.load()},
                     {"ecn_marked", s.ecn_marked_pkts.load()},
                     {"dropped", dropped},
                     {"peak_cells", buffer_.state().peak_queue_cells(q)}});
    }
    return out.dump();
  }

 private:
  datapath::SwitchConfig config_;
  buffer::SharedBuffer buffer_;
  buffer::CellCache cache_;
  policies::PolicyEnv env_;
  datapath::Classifier classifier_;
  std::vector<datapath::Scheduler> schedulers_;
  std::unique_ptr<policies::Policy> policy_;
  buffer::EvictedFrames evicted_;
  std::array<std::byte, buffer::BufferLayout::kMaxFrameBytes> frame_{};
  bool recording_ = false;
  std::string arrivals_;
  std::vector<uint8_t> fates_;
  std::unordered_map<uint64_t, size_t> seq_of_;  // handle -> arrival number, while queued
};

}  // namespace

std::unique_ptr<SwitchFacade> SwitchFacade::from_toml(const std::string& text,
                                                      const std::string& source) {
  mgmt::DaemonConfig cfg;
  try {
    cfg = mgmt::parse_config(text, source);
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what());
  }
  refuse_unmodelled(cfg.sw, source);  // a std::runtime_error naming source and class
  for (const datapath::PortConfig& p : cfg.sw.ports) {
    if (p.rate_bps == 0)
      throw std::runtime_error(source + ": port '" + p.name +
                               "' has no rate; a simulated port needs one (key 'rate')");
  }
  return std::make_unique<SwitchImpl>(cfg.sw);
}

}  // namespace sharebuf::sim

#include "sim/replay.h"

#include <algorithm>
#include <array>
#include <deque>
#include <optional>
#include <stdexcept>

#include "buffer/accounting_check.h"
#include "model/admission_step.h"
#include "model/departure_step.h"
#include "model/overflow_step.h"
#include "model/switch_model.h"
#include "policies/credence_features.h"
#include "sim/same_instant.h"

namespace sharebuf::sim {
namespace {

using buffer::BufferLayout;
using model::ingress_view;
using model::SwitchModel;

struct QueuedFrame {
  uint64_t seq;
  uint32_t head_cell;
};

struct TraceRow {
  uint64_t time_ns;
  uint32_t queue;
  uint32_t cells;
  double features[policies::kOracleFeatures];
};

// The configuration with the policy to replay in place of its own, checked for what a replay needs.
model::SwitchConfig with_policy(model::SwitchConfig config, const ReplayPolicy& policy) {
  for (const model::PortConfig& p : config.ports) {
    if (p.rate_bps == 0)
      throw std::invalid_argument("replay: port '" + p.name +
                                  "' has no rate (sim::replay_config gives unshaped ports one)");
  }
  if (const auto bad = buffer::ProbeRegisters::check_timing(config.buffer.probe_interval_ns,
                                                            config.buffer.probe_delay_ns))
    throw std::invalid_argument("replay: cannot model the probe view: " + *bad);
  config.policy = policy.name;
  config.policy_params = policy.params;
  return config;
}

bool trims(const model::SwitchConfig& config) {
  return std::any_of(config.classes.begin(), config.classes.end(),
                     [](const auto& c) { return c.overflow != model::OverflowAction::kDrop; });
}

class ReplayEngine final : private model::OverflowStep::Sink {
 public:
  ReplayEngine(const model::SwitchConfig& config, const ReplayPolicy& policy,
               const ReplayOptions& options)
      : options_(options),
        model_(with_policy(config, policy), {.oracle_labels = options.oracle_labels}),
        buffer_(model_.buffer()),
        cache_(buffer_.pool()),
        overflow_(model_.overflow_step(0, /*synthetic=*/true)),
        trims_(trims(config)) {
    const BufferLayout& layout = buffer_.layout();
    for (const model::PortConfig& p : config.ports)
      port_names_.push_back(p.name);
    busy_until_.assign(layout.num_ports(), 0);
    last_finish_.assign(layout.num_ports(), kNever);
    queued_.resize(layout.num_queues());
    pushed_seen_.assign(layout.num_queues(), 0);
    overflow_.reserve(BufferLayout::kMaxFrameBytes);
    label_ = policy.label.empty() ? policy.name : policy.label;
  }

  ReplayResult run(const std::vector<ReplayArrival>& arrivals) {
    const BufferLayout& layout = buffer_.layout();
    features_.emplace(layout.num_queues(), options_.feature_base_rtt_ns);
    fates_.assign(arrivals.size(), 0);
    if (options_.trace != nullptr) trace_.reserve(arrivals.size());
    if (options_.timeline != nullptr && options_.timeline_header)
      *options_.timeline
          << "t_s,policy,port,queue,occupancy_cells,threshold_cells,dropped,total_cells,"
             "capacity_cells\n";
    const bool sampling = options_.timeline != nullptr && options_.timeline_interval_ns != 0;
    // One event at a time, in time order across every port. At equal times: a timeline sample
    // first (it shows the buffer after every earlier event), then departures before arrivals
    // (the default: a port that frees cells at t admits with them at t), or arrivals before
    // departures (Credence's slotted model). Ties among ports go to the lower port.
    uint64_t n = 0;
    for (;;) {
      const bool more = n < arrivals.size() && arrivals[n].time_ns <= options_.end_ns;
      const uint64_t t_arrival = more ? arrivals[n].time_ns : kNever;
      uint32_t port = 0;
      const uint64_t t_departure = next_departure(port);
      const uint64_t t_sample = sampling ? next_sample_ns_ : kNever;
      // A deflected frame leaving its recirculation port (trimming's Tofino approximation).
      model::TofinoApprox& tofino = model_.tofino();
      const uint64_t t_recirc = tofino.any_deflected() ? tofino.next_departure_ns() : kNever;
      const uint64_t t = std::min({t_arrival, t_departure, t_sample, t_recirc});
      if (t == kNever || t > options_.end_ns) break;
      if (t_sample == t) {
        sample(t);
        next_sample_ns_ =
            t > kNever - options_.timeline_interval_ns ? kNever : t + options_.timeline_interval_ns;
      } else if (t_departure == t && (t_arrival != t || !options_.arrivals_first)) {
        depart(port);
      } else if (t_recirc == t && (t_arrival != t || !options_.arrivals_first)) {
        now_ns_ = t;
        release_deflected(t);
      } else {
        arrive(arrivals[n], n);
        ++n;
      }
    }
    fates_.resize(n);
    write_trace();
    return report(n);
  }

 private:
  static constexpr uint64_t kNever = UINT64_MAX;
  static constexpr uint64_t kCopy = UINT64_MAX;  // QueuedFrame::seq of a cut copy

  // Deflected frames leaving their recirculation ports at t; their notifications logged (each
  // reaches the pipelines one recirculation latency later).
  void release_deflected(uint64_t t) {
    if (options_.trim_notes != nullptr) {
      notes_seen_.resize(buffer_.layout().num_ports());
      for (uint32_t p = 0; p < notes_seen_.size(); ++p)
        notes_seen_[p] = model_.tofino().counters(p).notifications.load();
    }
    overflow_.release_deflected(model_.policy(), cache_, t, *this);
    settle_push_outs();
    if (options_.trim_notes == nullptr) return;
    const uint64_t at = t + model_.tofino().settings.recirc_latency_ns.load();
    for (uint32_t p = 0; p < notes_seen_.size(); ++p) {
      for (uint64_t k = notes_seen_[p]; k < model_.tofino().counters(p).notifications.load(); ++k)
        *options_.trim_notes << label_ << ',' << at << ',' << port_names_[p] << '\n';
    }
  }

  // OverflowStep::Sink: the arrival being replayed, or a cut copy, entered queue q. Push-outs
  // counted so far are settled first, so the FIFO keeps the buffer's order.
  void enqueued(uint32_t q, bool copy) override {
    settle_push_outs();
    queued_[q].push_back({copy ? kCopy : seq_, buffer_.queue(q).peek_tail()});
    // An idle port starts sending the moment a frame arrives.
    const uint32_t port = buffer_.layout().port_of(q);
    busy_until_[port] = std::max(busy_until_[port], now_ns_);
  }

  void arrive(const ReplayArrival& a, uint64_t n) {
    const BufferLayout& layout = buffer_.layout();
    if (a.queue >= layout.num_queues())
      throw std::invalid_argument("replay: arrival " + std::to_string(n) + ": no queue " +
                                  std::to_string(a.queue));
    if (a.in_port >= layout.num_ports())
      throw std::invalid_argument("replay: arrival " + std::to_string(n) + ": no ingress port " +
                                  std::to_string(a.in_port));
    static const std::array<uint8_t, BufferLayout::kMaxFrameBytes> kPayload{};
    const uint32_t bytes = std::clamp<uint32_t>(a.bytes, 1, BufferLayout::kMaxFrameBytes);
    // The model's ingress step into the recorded queue: the ECN decision and the context.
    const SwitchModel::Copy copy = model_.copy_into(a.queue, {.class_id = a.class_id,
                                                              .bytes = bytes,
                                                              .ect = a.ect,
                                                              .flow_hash = a.flow_hash,
                                                              .in_port = a.in_port,
                                                              .now_ns = a.time_ns,
                                                              .seq = n,
                                                              .first_bdp = a.first_bdp});
    if (options_.trace != nullptr) {
      TraceRow row{a.time_ns, a.queue, copy.ctx.cells, {}};
      features_->observe(a.time_ns, a.queue, buffer_.state().queue_cells(a.queue),
                         buffer_.state().total_cells(), row.features);
      trace_.push_back(row);
    }
    now_ns_ = a.time_ns;
    seq_ = n;
    policies::Policy& policy = model_.policy();
    const model::OverflowStep::Result r = overflow_.admit(
        policy, ingress_view(policy, buffer_, a.time_ns), cache_, copy.ctx,
        model::OverflowStep::Frame{std::span<const uint8_t>(kPayload.data(), bytes), nullptr},
        copy.meta, a.in_port, a.time_ns, *this);
    model_.admitted(copy, r.outcome);
    settle_push_outs();
    if (!r.outcome.enqueued) fates_[n] = 1;
  }

  // The port whose next transmission starts first (lowest port among equals: sim/same_instant.h)
  // and that time, or kNever when no port holds a frame.
  uint64_t next_departure(uint32_t& port) const {
    static_assert(kNever == kNoDeparture);
    return sim::next_departure(
        static_cast<uint32_t>(busy_until_.size()),
        [&](uint32_t p) { return buffer_.state().port_cells(p) == 0 ? kNever : busy_until_[p]; },
        port);
  }

  // Which frames did LQD push out, or Occamy reclaim (always from the head)? The victims'
  // counters say how many, the queue's head says from which end.
  void settle_push_outs() {
    for (uint32_t q = 0; q < queued_.size(); ++q) {
      const uint64_t pushed = buffer_.stats(q).evicted();
      uint64_t k = pushed - pushed_seen_[q];
      pushed_seen_[q] = pushed;
      auto& fifo = queued_[q];
      const bool from_head =
          !fifo.empty() && buffer_.queue(q).peek_head() != fifo.front().head_cell;
      for (; k > 0 && !fifo.empty(); --k) {
        QueuedFrame& f = from_head ? fifo.front() : fifo.back();
        if (f.seq != kCopy) fates_[f.seq] = 1;
        if (from_head) {
          fifo.pop_front();
        } else {
          fifo.pop_back();
        }
      }
    }
  }

  void sample(uint64_t t_ns) {
    const BufferLayout& layout = buffer_.layout();
    const buffer::BufferView view = buffer_.view(t_ns);
    for (uint32_t q = 0; q < layout.num_queues(); ++q) {
      uint64_t drops = 0;
      for (size_t r = 1; r < buffer::kNumDropReasons; ++r)
        drops += buffer_.stats(q).dropped_pkts[r].load(std::memory_order_relaxed);
      const uint32_t p = layout.port_of(q);
      *options_.timeline << static_cast<double>(t_ns) * 1e-9 << ',' << label_ << ','
                         << port_names_[p] << ',' << q - layout.first_queue(p) << ','
                         << view.queue_cells(q) << ','
                         << model_.policy().threshold_cells(
                                q, buffer_.stats(q).shown_class(model_.env().class_of_queue(q)),
                                view)
                         << ',' << drops << ',' << view.total_cells() << ','
                         << layout.capacity_cells() << '\n';
    }
  }

  // Port p starts its next transmission (at busy_until_[p]): model/departure_step.h. With [buffer]
  // probe_bytes, the probes of the boundaries passed since the port's last departure go first
  // (model/probe_charge.h) and the frame waits for them.
  void depart(uint32_t p) {
    if (charge_probes(p)) return;
    const std::optional<model::Departed> d =
        model::depart_next(buffer_, cache_, model_.port(p).scheduler, model_.policy(), p,
                           busy_until_[p], model_.config().ports[p].rate_bps);
    if (!d) return;  // unreachable: the port holds cells
    if (!queued_[d->queue].empty()) queued_[d->queue].pop_front();
    if (options_.departures != nullptr)
      *options_.departures << label_ << ',' << busy_until_[p] << ',' << d->queue << ','
                           << d->desc.arrival_ns << ',' << d->desc.bytes << ','
                           << ((d->desc.flags & buffer::kFlagTrimmed) != 0 ? 1 : 0) << ','
                           << ((d->desc.flags & buffer::kFlagEcnMarked) != 0 ? 1 : 0) << '\n';
    ++transmitted_;
    busy_until_[p] = last_finish_[p] = d->departed_ns;
  }

  // Whether probes now hold port p (busy_until_[p] moved past them).
  bool charge_probes(uint32_t p) {
    if (buffer_.probe_bytes() == 0 || !buffer_.probes().enabled()) return false;
    // Backlogged: this transmission starts when the last one ended (a frame was waiting).
    const bool backlogged = busy_until_[p] == last_finish_[p];
    const uint64_t owed = model_.port(p).probe_charge.owed_bytes(
        busy_until_[p], buffer_.probes().interval_ns(),
        uint64_t{buffer_.probe_bytes()} * buffer_.layout().queues_on_port(p), backlogged, kNever);
    if (owed == 0) return false;
    busy_until_[p] = last_finish_[p] =
        busy_until_[p] +
        model::transmit_ns(static_cast<uint32_t>(std::min<uint64_t>(owed, UINT32_MAX)),
                           model_.config().ports[p].rate_bps);
    probe_charged_bytes_ += owed;
    return true;
  }

  void write_trace() {
    if (options_.trace == nullptr) return;
    std::ostream& out = *options_.trace;
    const auto precision = out.precision(10);  // EWMAs are fractional: keep what training sees
    out << kTraceHeader << '\n';
    for (size_t i = 0; i < trace_.size(); ++i) {
      const TraceRow& r = trace_[i];
      out << i << ',' << r.time_ns << ',' << r.queue << ',' << r.cells << ',' << r.features[0]
          << ',' << r.features[1] << ',' << r.features[2] << ',' << r.features[3] << ','
          << int{fates_[i]} << '\n';
    }
    out.precision(precision);
  }

  ReplayResult report(uint64_t arrivals) {
    ReplayResult r;
    r.policy = label_;
    r.arrivals = arrivals;
    r.transmitted = transmitted_;
    r.probe_charged_bytes = probe_charged_bytes_;
    r.accounting_errors = buffer::check_accounting(buffer_);
    r.state = model_.policy().describe(buffer_.exact_view());
    r.params = model_.policy().params();
    r.peak_total_cells = buffer_.state().peak_total_cells();
    for (uint32_t q = 0; q < buffer_.layout().num_queues(); ++q) {
      const buffer::QueueStats& s = buffer_.stats(q);
      QueueReport qr;
      qr.arrivals = s.received_pkts.load();
      qr.enqueued = s.enqueued_pkts.load();
      qr.transmitted = s.dequeued_pkts.load();
      qr.transmitted_cells = s.dequeued_cells.load();
      for (size_t i = 0; i < buffer::kNumDropReasons; ++i) {
        qr.dropped[i] = s.dropped_pkts[i].load();
        qr.dropped_cells[i] = s.dropped_cells[i].load();
      }
      qr.peak_cells = buffer_.state().peak_queue_cells(q);
      qr.final_cells = buffer_.state().queue_cells(q);
      qr.trimmed = s.trimmed_pkts.load();
      qr.bounced = s.bounced_pkts.load();
      qr.deflected = s.deflected_pkts.load();
      qr.trimmed_newest = s.trimmed_newest_pkts.load();
      qr.trimmed_dropped = s.trimmed_dropped_pkts.load();
      qr.header_reserve = s.header_reserve_pkts.load();
      r.queues.push_back(qr);
    }
    if (trims_) {
      r.tofino = nlohmann::json::array();
      for (uint32_t p = 0; p < buffer_.layout().num_ports(); ++p) {
        const model::TofinoApprox::PortCounters& c = model_.tofino().counters(p);
        r.tofino.push_back({{"port", port_names_[p]},
                            {"ingress_trimmed", c.ingress_trimmed.load()},
                            {"deflected", c.deflected.load()},
                            {"deflect_dropped", c.deflect_dropped.load()},
                            {"notifications", c.notifications.load()},
                            {"to_pessimistic", c.to_pessimistic.load()},
                            {"to_half", c.to_half.load()},
                            {"to_optimistic", c.to_optimistic.load()},
                            {"deflect_queue_peak", c.deflect_queue_peak.load()}});
      }
    }
    model_.tofino().discard_all(buffer_.state());
    r.fates = std::move(fates_);
    buffer_.drain_all(cache_);
    return r;
  }

  const ReplayOptions& options_;
  std::optional<policies::CredenceFeatures> features_;
  SwitchModel model_;  // the switch every engine runs
  buffer::SharedBuffer& buffer_;
  buffer::CellCache cache_;
  model::OverflowStep overflow_;
  bool trims_;  // a class's overflow action is not drop: report the Tofino approximation
  std::vector<std::string> port_names_;
  std::vector<uint64_t> busy_until_;
  std::vector<uint64_t> last_finish_;  // when each port's last transmission (or probes) ended
  uint64_t probe_charged_bytes_ = 0;
  std::vector<std::deque<QueuedFrame>> queued_;
  std::vector<uint64_t> pushed_seen_;
  std::vector<uint8_t> fates_;
  std::vector<TraceRow> trace_;
  uint64_t transmitted_ = 0;
  uint64_t next_sample_ns_ = 0;
  uint64_t now_ns_ = 0;               // the time of the event being replayed (the Sink's clock)
  uint64_t seq_ = 0;                  // the arrival being replayed
  std::vector<uint64_t> notes_seen_;  // notifications per port before a release (trim_notes)
  std::string label_;
};

}  // namespace

model::SwitchConfig replay_config(model::SwitchConfig config) {
  for (model::PortConfig& p : config.ports)
    if (p.rate_bps == 0) p.rate_bps = 10'000'000'000ull;
  return config;
}

ReplayResult run_replay(const model::SwitchConfig& config, const ReplayPolicy& policy,
                        const std::vector<ReplayArrival>& arrivals, const ReplayOptions& options) {
  ReplayEngine engine(config, policy, options);
  return engine.run(arrivals);
}

}  // namespace sharebuf::sim

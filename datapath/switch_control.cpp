#include "datapath/switch_control.h"

#include <cstdio>

#include "buffer/accounting_check.h"
#include "buffer/drop_reason.h"
#include "datapath/clocks.h"
#include "datapath/switch_core.h"
#include "policies/registry.h"

namespace sharebuf::datapath {

std::string_view to_string(ControlErrorCode code) noexcept {
  switch (code) {
    case ControlErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ControlErrorCode::kConflict:
      return "conflict";
    case ControlErrorCode::kNotFound:
      return "not_found";
    case ControlErrorCode::kIo:
      return "io_error";
  }
  return "?";
}

namespace {

// The non-empty buckets of a queue's delay histogram as [lowest ns of the bucket, frames].
nlohmann::json delay_buckets(const buffer::DelayHistogram& h) {
  nlohmann::json out = nlohmann::json::array();
  for (int b = 0; b < buffer::DelayHistogram::kBuckets; ++b) {
    if (const uint64_t n = h.count_in(b))
      out.push_back({buffer::DelayHistogram::lower_bound(b), n});
  }
  return out;
}

// A port's hop histograms (datapath/hop_latency.h): per hop the count, p50/p99/p99.9 and the
// non-empty buckets.
nlohmann::json hop_latency_json(const HopLatency& lat) {
  nlohmann::json out = nlohmann::json::object();
  for (int h = 0; h < HopLatency::kNumHops; ++h) {
    const buffer::DelayHistogram& hist = lat.hops[h];
    out[std::string(HopLatency::kNames[static_cast<size_t>(h)])] = {
        {"count", hist.count()},
        {"p50_ns", hist.quantile(0.5)},
        {"p99_ns", hist.quantile(0.99)},
        {"p999_ns", hist.quantile(0.999)},
        {"histogram", delay_buckets(hist)}};
  }
  return out;
}

}  // namespace

namespace {
// The Tofino approximation's counters for egress port p, and its state in each pipeline.
nlohmann::json tofino_port_json(const model::TofinoApprox& t, uint32_t p) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const model::TofinoApprox::PortCounters& c = t.counters(p);
  nlohmann::json states = nlohmann::json::array();
  const uint64_t now = monotonic_ns();
  for (uint32_t pipe = 0; pipe < t.pipelines(); ++pipe)
    states.push_back(model::to_string(t.state(pipe, p, now)));
  return {{"line_rate_bps", t.line_rate_bps(p)},
          {"ingress_trimmed", c.ingress_trimmed.load(kRelaxed)},
          {"deflected", c.deflected.load(kRelaxed)},
          {"deflect_dropped", c.deflect_dropped.load(kRelaxed)},
          {"notifications", c.notifications.load(kRelaxed)},
          {"to_pessimistic", c.to_pessimistic.load(kRelaxed)},
          {"to_half", c.to_half.load(kRelaxed)},
          {"to_optimistic", c.to_optimistic.load(kRelaxed)},
          {"deflect_queue_peak", c.deflect_queue_peak.load(kRelaxed)},
          {"states", states}};
}
}  // namespace

nlohmann::json SwitchControl::stats() const {
  const SwitchCore& core = core_;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const buffer::SharedBuffer& buf = core.buffer();
  const buffer::BufferLayout& layout = buf.layout();
  const policies::Policy& policy = core.policy();
  const buffer::BufferView view = buf.view(monotonic_ns());
  nlohmann::json out;
  out["switch"] = core.config().name;
  out["policy"] = policy.describe(view);
  out["buffer"] = {{"capacity_cells", layout.capacity_cells()},
                   {"cell_bytes", layout.cell_bytes()},
                   {"view", buffer::to_string(buf.view_mode())},
                   {"probe_interval_ns", buf.probes().interval_ns()},
                   {"probe_delay_ns", buf.probes().delay_ns()},
                   {"probe_path", buffer::to_string(buf.probes().path())},
                   {"occupancy_cells", buf.state().total_cells()},
                   {"peak_cells", buf.state().peak_total_cells()},
                   {"free_cells", buf.state().free_cells()},
                   {"outside_cells", buf.state().outside_cells()},
                   {"header_reserve_cells", buf.state().header_reserve_cells()},
                   {"pool_physical_cells", buf.pool().physical_cells()},
                   {"pool_free_cells", buf.pool().free_cells_approx()}};
  for (uint32_t p = 0; p < core.ports.size(); ++p) {
    const PortRuntime& port = *core.ports[p];
    const PortCounters& c = port.counters;
    nlohmann::json malformed = nlohmann::json::object();
    for (size_t i = 1; i < model::kNumParseErrors; ++i) {
      malformed[std::string(model::kParseErrorNames[i])] = c.malformed[i].load(kRelaxed);
    }
    nlohmann::json queues = nlohmann::json::array();
    for (uint32_t k = 0; k < layout.queues_on_port(p); ++k) {
      const uint32_t q = layout.queue_id(p, k);
      const buffer::QueueStats& s = buf.stats(q);
      nlohmann::json dropped = nlohmann::json::object();
      for (size_t r = 1; r < buffer::kNumDropReasons; ++r) {
        dropped[std::string(buffer::kDropReasonNames[r])] = s.dropped_pkts[r].load(kRelaxed);
      }
      queues.push_back({{"queue", k},
                        {"id", q},
                        {"group", buffer::to_string(layout.group_of(q))},
                        {"received", s.received_pkts.load(kRelaxed)},
                        {"admitted", s.enqueued_pkts.load(kRelaxed)},
                        {"admitted_cells", s.enqueued_cells.load(kRelaxed)},
                        {"transmitted", s.dequeued_pkts.load(kRelaxed)},
                        {"transmitted_bytes", s.dequeued_bytes.load(kRelaxed)},
                        {"queued", buf.queue(q).length_packets_approx()},
                        {"dropped", dropped},
                        {"ecn_marked", s.ecn_marked_pkts.load(kRelaxed)},
                        {"trimmed", s.trimmed_pkts.load(kRelaxed)},
                        {"trimmed_sent", s.trimmed_sent_pkts.load(kRelaxed)},
                        {"trimmed_dropped", s.trimmed_dropped_pkts.load(kRelaxed)},
                        {"header_reserve", s.header_reserve_pkts.load(kRelaxed)},
                        {"bounced", s.bounced_pkts.load(kRelaxed)},
                        {"deflected", s.deflected_pkts.load(kRelaxed)},
                        {"trimmed_newest", s.trimmed_newest_pkts.load(kRelaxed)},
                        {"pool_full_stalled", s.stalled_pkts.load(kRelaxed)},
                        {"delay_p50_ns", s.delay.quantile(0.5)},
                        {"delay_p99_ns", s.delay.quantile(0.99)},
                        {"delay_histogram", delay_buckets(s.delay)},
                        {"occupancy_cells", buf.state().queue_cells(q)},
                        {"peak_cells", buf.state().peak_queue_cells(q)},
                        {"threshold_cells",
                         policy.threshold_cells(
                             q, s.shown_class(core.switch_model.env().class_of_queue(q)), view)}});
    }
    out["ports"].push_back({{"port", p},
                            {"interface", port.config.name},
                            {"rate_bps", port.line_rate_bps.load(kRelaxed)},
                            {"mtu", port.io ? port.io->mtu() : port.link.mtu},
                            {"tx_io", port.io ? port.io->tx_io() : "none"},
                            {"scheduler", model::to_string(port.config.scheduler)},
                            {"header_free_cells", buf.state().header_free_cells(p)},
                            {"rx_frames", c.rx_frames.load(kRelaxed)},
                            {"rx_bytes", c.rx_bytes.load(kRelaxed)},
                            {"tx_frames", c.tx_frames.load(kRelaxed)},
                            {"tx_bytes", c.tx_bytes.load(kRelaxed)},
                            {"tx_errors", c.tx_errors.load(kRelaxed)},
                            {"rx_kept_in_chunk", c.rx_kept_in_chunk.load(kRelaxed)},
                            {"tx_from_chunk", c.tx_from_chunk.load(kRelaxed)},
                            {"shaper_catchup_bytes", c.shaper_catchup_bytes.load(kRelaxed)},
                            {"probe_charged_bytes", c.probe_charged_bytes.load(kRelaxed)},
                            {"ring_drops", c.ring_drops.load(kRelaxed)},
                            {"socket_frames", c.socket_frames.load(kRelaxed)},
                            {"rx_out_of_order", c.rx_out_of_order.load(kRelaxed)},
                            {"truncated", c.truncated.load(kRelaxed)},
                            {"filtered", c.filtered.load(kRelaxed)},
                            {"flooded", c.flooded.load(kRelaxed)},
                            {"oversize", c.oversize.load(kRelaxed)},
                            {"storm_dropped", c.storm_dropped.load(kRelaxed)},
                            {"checksum_completed", c.checksum_completed.load(kRelaxed)},
                            {"malformed", malformed},
                            {"malformed_total", c.malformed_total()},
                            {"latency", hop_latency_json(port.latency)},
                            {"tofino_approx", tofino_port_json(core.switch_model.tofino(), p)},
                            {"queues", queues}});
    // The kernel's own count of what the interface received: what never reached the socket
    // (dropped on the way, e.g. a truncated VLAN header) is the difference, so that "sent -
    // delivered = counted" holds end to end. Read last: frames arriving meanwhile count in both.
    if (port.io != nullptr) {
      if (const auto received = port.io->interface_rx_frames()) {
        const uint64_t socket = c.socket_frames.load(kRelaxed);
        out["ports"].back()["interface_rx_frames"] = *received;
        out["ports"].back()["before_socket"] = *received - std::min(*received, socket);
      }
    }
  }
  return out;
}

nlohmann::json SwitchControl::stats_from_other_thread() const {
  // The report reads the active policy: announce it, as the workers do (datapath/epochs.h).
  const std::lock_guard<std::mutex> one_reader(core_.aux_mutex);
  core_.epochs.enter(core_.aux_slot());
  nlohmann::json out = stats();
  core_.epochs.idle(core_.aux_slot());
  return out;
}

nlohmann::json SwitchControl::watch_sample() const {
  const SwitchCore& core = core_;
  const auto& buf = core.buffer();
  const auto& layout = buf.layout();
  const policies::Policy& policy = core.policy();
  const buffer::BufferView view = buf.view(monotonic_ns());
  nlohmann::json queues = nlohmann::json::array();
  for (uint32_t q = 0; q < layout.num_queues(); ++q) {
    const auto& s = buf.stats(q);
    uint64_t drops = 0;
    for (size_t r = 1; r < buffer::kNumDropReasons; ++r)
      drops += s.dropped_pkts[r].load(std::memory_order_relaxed);
    queues.push_back(
        {{"id", q},
         {"port", core.ports.empty() ? std::string() : core.ports[layout.port_of(q)]->config.name},
         {"queue", q - layout.first_queue(layout.port_of(q))},
         {"occupancy_cells", buf.state().queue_cells(q)},
         {"threshold_cells",
          policy.threshold_cells(q, s.shown_class(core.switch_model.env().class_of_queue(q)),
                                 view)},
         {"dropped", drops},
         {"trimmed", s.trimmed_pkts.load(std::memory_order_relaxed) +
                         s.bounced_pkts.load(std::memory_order_relaxed)}});
  }
  return {{"t_ns", monotonic_ns()},
          {"policy", policy.name()},
          {"occupancy_cells", buf.state().total_cells()},
          {"capacity_cells", layout.capacity_cells()},
          {"queues", queues}};
}

const model::SwitchConfig& SwitchControl::config() const noexcept {
  return core_.config();
}

const policies::PolicyEnv& SwitchControl::policy_env() const noexcept {
  return core_.switch_model.env();
}

std::string SwitchControl::policy_name() const {
  return std::string(core_.policy().name());
}

nlohmann::json SwitchControl::policy_params() const {
  return core_.policy().params();
}

nlohmann::json SwitchControl::policy_describe() const {
  return core_.policy().describe(core_.buffer().view(monotonic_ns()));
}

ControlResult<std::string> SwitchControl::install_policy(std::string_view name,
                                                         const policies::Params& params) {
  std::unique_ptr<policies::Policy> next;
  try {
    next = policies::make_policy(name, params, core_.switch_model.env());
  } catch (const policies::ConfigError& e) {
    return ControlError{ControlErrorCode::kInvalidArgument, e.what()};
  } catch (const std::exception& e) {  // a model file that cannot be read or parsed
    return ControlError{ControlErrorCode::kInvalidArgument, e.what()};
  }
  std::string previous = policy_name();
  core_.install_policy(std::move(next));
  return previous;
}

std::optional<ControlError> SwitchControl::set_port_rate(std::string_view port, uint64_t rate_bps) {
  std::optional<size_t> p;
  for (size_t i = 0; i < core_.ports.size(); ++i)
    if (core_.ports[i]->config.name == port) p = i;
  if (!p) return ControlError{ControlErrorCode::kNotFound, "no port '" + std::string(port) + "'"};
  PortRuntime& runtime = *core_.ports[*p];
  if (runtime.line_rate_bps.load(std::memory_order_relaxed) == rate_bps) return std::nullopt;
  if (core_.switch_model.trim().tofino_approx.load(std::memory_order_relaxed)) {
    return ControlError{ControlErrorCode::kConflict,
                        "trimming's mode tofino-approx meters port '" + std::string(port) +
                            "' at the rate it started with: restart sharebufd to change it"};
  }
  runtime.line_rate_bps.store(rate_bps, std::memory_order_relaxed);
  // Policies built from now on see it (the caller reinstalls the running one).
  core_.switch_model.set_port_rate(static_cast<uint32_t>(*p), rate_bps);
  runtime.signal.wake_if_sleeping();  // an idle port applies it at once (and sleeps again)
  return std::nullopt;
}

ViewSettings SwitchControl::view() const noexcept {
  const buffer::SharedBuffer& buf = core_.buffer();
  return {buf.view_mode(), buf.probes().interval_ns(), buf.probes().delay_ns()};
}

std::optional<ControlError> SwitchControl::set_view(std::optional<buffer::ViewMode> mode,
                                                    std::optional<uint64_t> probe_interval_ns,
                                                    std::optional<uint64_t> probe_delay_ns) {
  buffer::SharedBuffer& buf = core_.buffer();
  const uint64_t interval = probe_interval_ns.value_or(buf.probes().interval_ns());
  const uint64_t delay = probe_delay_ns.value_or(buf.probes().delay_ns());
  if (const auto bad = buffer::ProbeRegisters::check_timing(interval, delay))
    return ControlError{ControlErrorCode::kInvalidArgument, *bad};
  if (interval != buf.probes().interval_ns() || delay != buf.probes().delay_ns())
    buf.probes().set_timing(interval, delay);
  if (mode) buf.set_view_mode(*mode, monotonic_ns());
  return std::nullopt;
}

nlohmann::json SwitchControl::status() const {
  const buffer::SharedBuffer& buf = core_.buffer();
  uint64_t drops = 0;
  uint64_t admitted = 0;
  for (uint32_t q = 0; q < buf.layout().num_queues(); ++q) {
    const auto& s = buf.stats(q);
    admitted += s.enqueued_pkts.load(std::memory_order_relaxed);
    for (size_t r = 1; r < buffer::kNumDropReasons; ++r)
      drops += s.dropped_pkts[r].load(std::memory_order_relaxed);
  }
  nlohmann::json rx_workers = nlohmann::json::array();
  for (const auto& w : core_.rx_parking) {
    nlohmann::json ports = nlohmann::json::array();
    for (uint32_t p : w->ports)
      ports.push_back(core_.ports[p]->config.name);
    rx_workers.push_back({{"ports", ports},
                          {"parked", w->parked.load(std::memory_order_relaxed)},
                          {"parks", w->parks.load(std::memory_order_relaxed)},
                          {"unparks", w->unparks.load(std::memory_order_relaxed)},
                          {"frames", w->frames.load(std::memory_order_relaxed)}});
  }
  return {{"ports", core_.ports.size()},
          {"queues", buf.layout().num_queues()},
          {"capacity_cells", buf.layout().capacity_cells()},
          {"cell_bytes", buf.layout().cell_bytes()},
          {"occupancy_cells", buf.state().total_cells()},
          {"peak_cells", buf.state().peak_total_cells()},
          {"admitted", admitted},
          {"dropped", drops},
          {"retired_pending", core_.retired_pending()},
          {"retired_reclaimed", core_.reclaimed()},
          {"rx_mode", core_.config().rx_mode == model::RxMode::kPerCpu ? "per-cpu" : "per-port"},
          {"rx_io", core_.config().rx_io == model::RxIo::kAfXdp ? "af_xdp" : "af_packet"},
          {"tx_io", core_.config().tx_io == model::TxIo::kAfXdp ? "af_xdp" : "af_packet"},
          // Whether the AF_XDP ports share one UMEM: only if it was set up (rx_io af_xdp).
          {"af_xdp_umem", core_.buffer().pool().chunks() != nullptr     ? "shared"
                          : core_.config().rx_io == model::RxIo::kAfXdp ? "per-socket"
                                                                        : "none"},
          {"poll_mode", model::poll_mode_name(core_.config().poll_mode)},
          {"rx_workers", rx_workers}};
}

void SwitchControl::reset_peaks() noexcept {
  core_.buffer().state().reset_peaks();
  core_.switch_model.tofino().reset_peaks();
  for (auto& port : core_.ports)
    port->latency.reset();
}

std::vector<std::string> SwitchControl::check_accounting() const {
  return buffer::check_accounting(core_.buffer());
}

std::vector<std::string> SwitchControl::describe_ports() const {
  std::vector<std::string> out;
  for (const auto& p : core_.ports) {
    out.push_back("port " + p->config.name + ": ifindex " + std::to_string(p->link.ifindex) +
                  ", mtu " + std::to_string(p->io ? p->io->mtu() : p->link.mtu) + ", rate " +
                  (p->line_rate_bps == 0 ? std::string("unshaped")
                                         : std::to_string(p->line_rate_bps) + " bit/s") +
                  ", " + std::to_string(p->config.num_queues) + " queue(s), scheduler " +
                  std::string(model::to_string(p->config.scheduler)));
  }
  return out;
}

std::optional<std::string> SwitchControl::capture_path() const {
  const FrameCapture* cap = core_.capture.load();
  if (cap == nullptr) return std::nullopt;
  return cap->status()["path"].get<std::string>();
}

std::optional<ControlError> SwitchControl::start_capture(std::unique_ptr<FrameCapture> capture) {
  if (const auto path = capture_path()) {
    return ControlError{ControlErrorCode::kConflict,
                        "a capture is running (" + *path + "); capture.stop first"};
  }
  core_.start_capture(std::move(capture));
  return std::nullopt;
}

ControlResult<nlohmann::json> SwitchControl::stop_capture() {
  FrameCapture* cap = core_.stop_capture();  // retired, freed by a later reclaim()
  if (cap == nullptr) return ControlError{ControlErrorCode::kNotFound, "no capture is running"};
  cap->finish();  // a worker still inside offer() holds the lock; finish() waits for it
  if (const std::string err = cap->write_error(); !err.empty()) {
    return ControlError{ControlErrorCode::kIo,
                        "the capture is stopped but incomplete: writing " + err + " (" +
                            std::to_string(cap->status()["frames"].get<uint64_t>()) +
                            " frames offered)"};
  }
  return cap->status();
}

size_t SwitchControl::reclaim() {
  return core_.reclaim();
}

size_t SwitchControl::retired_pending() const noexcept {
  return core_.retired_pending();
}

uint64_t SwitchControl::reclaimed() const noexcept {
  return core_.reclaimed();
}

nlohmann::json SwitchControl::trimming() const {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const model::TrimSettings& t = core_.switch_model.trim();
  const model::TofinoApprox::Settings& ts = core_.switch_model.tofino().settings;
  nlohmann::json classes = nlohmann::json::array();
  for (size_t c = 0; c < core_.config().classes.size(); ++c) {
    classes.push_back({{"class", core_.config().classes[c].traffic.name},
                       {"overflow", model::to_string(t.overflow_of(static_cast<uint8_t>(c)))},
                       {"return_threshold_cells", t.return_threshold[c].load(kRelaxed)}});
  }
  nlohmann::json ports = nlohmann::json::array();
  for (size_t p = 0; p < core_.ports.size(); ++p) {
    ports.push_back({{"port", core_.ports[p]->config.name},
                     {"trim_queue", t.trim_queue[p].load(kRelaxed)},
                     {"trim_dscp_toward", t.dscp_toward[p].load(kRelaxed)}});
  }
  return {{"trim_size", t.size.load(kRelaxed)},
          {"trim_fix_lengths", t.fix_lengths.load(kRelaxed)},
          {"trim_dscp", t.dscp.load(kRelaxed)},
          {"return_dscp", t.return_dscp.load(kRelaxed)},
          {"mode", t.tofino_approx.load(kRelaxed) ? "tofino-approx" : "ideal"},
          {"trim_newest", t.trim_newest_p16.load(kRelaxed) / 65536.0},
          {"pipelines", core_.switch_model.tofino().pipelines()},
          {"meters", model::to_string(static_cast<model::MeterVariant>(ts.variant.load(kRelaxed)))},
          {"meter_burst", ts.burst_bytes.load(kRelaxed)},
          {"pessimistic_share", ts.pessimistic_share.load(kRelaxed)},
          {"t0_ns", ts.t0_ns.load(kRelaxed)},
          {"t1_ns", ts.t1_ns.load(kRelaxed)},
          {"recirc_rate_bps", ts.recirc_rate_bps.load(kRelaxed)},
          {"recirc_queue", ts.recirc_queue_bytes.load(kRelaxed)},
          {"recirc_latency_ns", ts.recirc_latency_ns.load(kRelaxed)},
          {"classes", classes},
          {"ports", ports}};
}

std::optional<ControlError> SwitchControl::set_trimming(const TrimUpdate& u) {
  auto invalid = [](std::string m) {
    return ControlError{ControlErrorCode::kInvalidArgument, std::move(m)};
  };
  std::optional<size_t> cls;
  if ((u.overflow || u.return_threshold_cells) && !u.class_name)
    return invalid("overflow and return_threshold need 'class'");
  if (u.class_name) {
    const auto& classes = core_.config().classes;
    for (size_t c = 0; c < classes.size(); ++c)
      if (classes[c].traffic.name == *u.class_name) cls = c;
    if (!cls) return ControlError{ControlErrorCode::kNotFound, "no class '" + *u.class_name + "'"};
  }
  std::optional<size_t> port;
  if ((u.trim_queue || u.trim_dscp_toward) && !u.port)
    return invalid("trim_queue and trim_dscp_toward need 'port'");
  if (u.port) {
    for (size_t p = 0; p < core_.ports.size(); ++p)
      if (core_.ports[p]->config.name == *u.port) port = p;
    if (!port) return ControlError{ControlErrorCode::kNotFound, "no port '" + *u.port + "'"};
    const uint32_t queues = core_.ports[*port]->config.num_queues;
    if (u.trim_queue && *u.trim_queue >= queues) {
      return invalid("trim_queue " + std::to_string(*u.trim_queue) + ": port " + *u.port + " has " +
                     std::to_string(queues) + " queue(s)");
    }
  }
  if (u.tofino_approx && *u.tofino_approx) {
    for (size_t p = 0; p < core_.ports.size(); ++p) {
      const uint64_t meter = core_.switch_model.tofino().line_rate_bps(static_cast<uint32_t>(p));
      const uint64_t rate = core_.ports[p]->line_rate_bps.load(std::memory_order_relaxed);
      if (meter == 0)
        return ControlError{ControlErrorCode::kConflict,
                            "mode tofino-approx meters each port at its line rate, but port '" +
                                core_.ports[p]->config.name +
                                "' has no rate and [trimming] line_rate is not set"};
      if (rate != 0 && rate != meter)
        return ControlError{ControlErrorCode::kConflict,
                            "mode tofino-approx meters port '" + core_.ports[p]->config.name +
                                "' at the " + std::to_string(meter) +
                                " bit/s it started with, but its rate is " + std::to_string(rate) +
                                " bit/s now: restart sharebufd to meter the new rate"};
    }
  }
  model::TrimSettings& t = core_.switch_model.trim();
  model::TofinoApprox::Settings& ts = core_.switch_model.tofino().settings;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  if (u.tofino_approx) t.tofino_approx.store(*u.tofino_approx, kRelaxed);
  if (u.trim_newest)
    t.trim_newest_p16.store(model::TrimSettings::probability_p16(*u.trim_newest), kRelaxed);
  if (u.meters) ts.variant.store(static_cast<uint8_t>(*u.meters), kRelaxed);
  if (u.meter_burst) ts.burst_bytes.store(*u.meter_burst, kRelaxed);
  if (u.pessimistic_share) ts.pessimistic_share.store(*u.pessimistic_share, kRelaxed);
  if (u.t0_ns) ts.t0_ns.store(*u.t0_ns, kRelaxed);
  if (u.t1_ns) ts.t1_ns.store(*u.t1_ns, kRelaxed);
  if (u.recirc_rate_bps) ts.recirc_rate_bps.store(*u.recirc_rate_bps, kRelaxed);
  if (u.recirc_queue) ts.recirc_queue_bytes.store(*u.recirc_queue, kRelaxed);
  if (u.recirc_latency_ns) ts.recirc_latency_ns.store(*u.recirc_latency_ns, kRelaxed);
  if (u.trim_size) t.size.store(*u.trim_size, kRelaxed);
  if (u.trim_fix_lengths) t.fix_lengths.store(*u.trim_fix_lengths, kRelaxed);
  if (u.trim_dscp) t.dscp.store(*u.trim_dscp, kRelaxed);
  if (u.return_dscp) t.return_dscp.store(*u.return_dscp, kRelaxed);
  if (u.overflow) t.overflow[*cls].store(static_cast<uint8_t>(*u.overflow), kRelaxed);
  if (u.return_threshold_cells) t.return_threshold[*cls].store(*u.return_threshold_cells, kRelaxed);
  if (u.trim_queue) t.trim_queue[*port].store(*u.trim_queue, kRelaxed);
  if (u.trim_dscp_toward) t.dscp_toward[*port].store(*u.trim_dscp_toward, kRelaxed);
  return std::nullopt;
}

TrimUpdate trim_update(const model::TrimConfig& t, const std::set<std::string, std::less<>>& keys) {
  TrimUpdate u;
  auto given = [&](std::string_view key) { return keys.count(key) != 0; };
  if (given("trim_size")) u.trim_size = t.size;
  if (given("trim_fix_lengths")) u.trim_fix_lengths = t.fix_lengths;
  if (given("trim_dscp")) u.trim_dscp = t.dscp;
  if (given("return_dscp")) u.return_dscp = t.return_dscp;
  if (given("trim_newest")) u.trim_newest = t.trim_newest;
  if (given("mode")) u.tofino_approx = t.tofino_approx;
  if (given("meters")) u.meters = t.meters;
  if (given("meter_burst")) u.meter_burst = t.meter_burst_bytes;
  if (given("pessimistic_share")) u.pessimistic_share = t.pessimistic_share;
  if (given("t0")) u.t0_ns = t.t0_ns;
  if (given("t1")) u.t1_ns = t.t1_ns;
  if (given("recirc_rate")) u.recirc_rate_bps = t.recirc_rate_bps;
  if (given("recirc_queue")) u.recirc_queue = t.recirc_queue_bytes;
  if (given("recirc_latency")) u.recirc_latency_ns = t.recirc_latency_ns;
  return u;
}

}  // namespace sharebuf::datapath

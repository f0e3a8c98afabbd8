#include "model/switch_config.h"

#include <unistd.h>

#include <algorithm>

namespace sharebuf::model {

std::string_view to_string(SchedulerKind k) noexcept {
  switch (k) {
    case SchedulerKind::kStrictPriority:
      return "sp";
    case SchedulerKind::kRoundRobin:
      return "rr";
    case SchedulerKind::kDrr:
      return "drr";
    case SchedulerKind::kDrrActive:
      return "drr_active";
  }
  return "?";
}

std::string_view to_string(ClassifyMode m) noexcept {
  switch (m) {
    case ClassifyMode::kDscp:
      return "dscp";
    case ClassifyMode::kPcp:
      return "pcp";
    case ClassifyMode::kRules:
      return "rules";
  }
  return "?";
}

uint32_t header_reserve_cells(const SwitchConfig& cfg) {
  const bool trims = std::any_of(cfg.classes.begin(), cfg.classes.end(), [](const ClassConfig& c) {
    return c.overflow != OverflowAction::kDrop;
  });
  if (!trims || cfg.trim.header_reserve == 0) return 0;
  const uint32_t cell = std::max<uint32_t>(1, cfg.buffer.cell_bytes);
  return cfg.trim.header_reserve * ((cfg.trim.size + cell - 1) / cell);
}

buffer::BufferConfig buffer_config(const SwitchConfig& cfg) {
  buffer::BufferConfig b = cfg.buffer;
  b.ports.clear();
  for (const PortConfig& p : cfg.ports) {
    buffer::PortSpec spec{.num_queues = p.num_queues};
    spec.queue_groups.assign(p.num_queues, buffer::PriorityGroup::kLow);
    // A queue is in the group of the first class that maps to it.
    for (uint32_t k = 0; k < p.num_queues; ++k) {
      for (const ClassConfig& c : cfg.classes) {
        if (c.queue == k) {
          spec.queue_groups[k] = c.traffic.group;
          break;
        }
      }
    }
    b.ports.push_back(std::move(spec));
  }
  // An RX and an egress worker per port hold a cell cache each, plus the control thread.
  b.max_threads = static_cast<uint32_t>(2 * cfg.ports.size() + 4);
  return b;
}

policies::PortScheduling port_scheduling(SchedulerKind kind, const std::vector<uint32_t>& weights) {
  switch (kind) {
    case SchedulerKind::kStrictPriority:
      return {policies::SchedulingKind::kStrictPriority, weights};
    case SchedulerKind::kDrr:
    case SchedulerKind::kDrrActive:
      return {policies::SchedulingKind::kDrr, weights};
    case SchedulerKind::kRoundRobin:
      break;
  }
  return {policies::SchedulingKind::kRoundRobin, weights};
}

policies::PolicyEnv policy_env(const SwitchConfig& config, const buffer::BufferLayout& layout) {
  policies::PolicyEnv env;
  env.layout = &layout;
  for (const ClassConfig& c : config.classes)
    env.classes.push_back(c.traffic);
  for (const PortConfig& p : config.ports) {
    env.port_rate_bps.push_back(p.rate_bps);
    env.port_scheduling.push_back(port_scheduling(p.scheduler, p.weights));
  }
  // Each queue is shown with the first class that maps to it.
  env.queue_class.assign(layout.num_queues(), 0);
  for (uint32_t port = 0; port < layout.num_ports(); ++port) {
    for (uint32_t k = 0; k < layout.queues_on_port(port); ++k) {
      for (size_t c = config.classes.size(); c-- > 0;) {
        if (config.classes[c].queue == k) {
          env.queue_class[layout.queue_id(port, k)] = static_cast<uint8_t>(c);
        }
      }
    }
  }
  return env;
}

std::string_view to_string(OverflowAction a) noexcept {
  switch (a) {
    case OverflowAction::kDrop:
      return "drop";
    case OverflowAction::kTrim:
      return "trim";
    case OverflowAction::kReturnToSender:
      return "return-to-sender";
  }
  return "?";
}

uint32_t machine_cpus() noexcept {
  // Configured, not online: the fanout group indexes by CPU id modulo its size, so a CPU that
  // comes online later still maps to its own lane.
  const long n = sysconf(_SC_NPROCESSORS_CONF);
  return static_cast<uint32_t>(std::clamp<long>(n, 1, 64));
}

uint32_t rx_workers(const SwitchConfig& config) noexcept {
  if (config.rx_mode == RxMode::kPerCpu) return machine_cpus();
  const uint32_t n = static_cast<uint32_t>(config.ports.size());
  return config.rx_threads == 0 ? n : std::min(config.rx_threads, n);
}

std::vector<uint64_t> meter_line_rates(const SwitchConfig& config) {
  std::vector<uint64_t> rates;
  for (const PortConfig& p : config.ports)
    rates.push_back(p.rate_bps != 0 ? p.rate_bps : config.trim.line_rate_bps);
  return rates;
}

}  // namespace sharebuf::model

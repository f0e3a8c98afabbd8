#include "datapath/switch_core.h"

#include <time.h>

#include "policies/registry.h"

namespace sharebuf::datapath {
namespace {

buffer::BufferConfig buffer_config_for(const SwitchConfig& cfg) {
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

}  // namespace

uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

SwitchCore::SwitchCore(const SwitchConfig& cfg)
    : config(cfg),
      buffer(buffer_config_for(cfg)),
      env(policy_env(cfg, buffer.layout())),
      macs(cfg.mac_table_size, cfg.mac_ageing_ns),
      classifier(cfg) {
  policy_owner = policies::make_policy(cfg.policy, cfg.policy_params, env);
  policy_owner->on_install(buffer.exact_view());
  policy.store(policy_owner.get(), std::memory_order_release);
  for (const PortConfig& p : cfg.ports)
    ports.push_back(std::make_unique<PortRuntime>(p));
  for (const StaticMacConfig& m : cfg.static_macs)
    macs.add_static(m.mac, m.port);
}

void SwitchCore::install_policy(std::unique_ptr<policies::Policy> next) {
  next->on_install(buffer.view());
  policy.store(next.get(), std::memory_order_release);
  retired_policies.push_back(std::move(policy_owner));
  policy_owner = std::move(next);
}

}  // namespace sharebuf::datapath

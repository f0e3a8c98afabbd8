#include "model/switch_model.h"

#include <stdexcept>
#include <string>

#include "policies/registry.h"

namespace sharebuf::model {

SwitchModel::SwitchModel(const SwitchConfig& config, const Options& options)
    : config_(config),
      buffer_(buffer_config(config)),
      env_(policy_env(config, buffer_.layout())),
      classifier_(config),
      macs_(config.mac_table_size, config.mac_ageing_ns),
      fabric_(config),
      trim_(config),
      tofino_(rx_workers(config), meter_line_rates(config)) {
  env_.oracle_labels = options.oracle_labels;
  configure_tofino(tofino_, config);
  if (const uint32_t reserve = header_reserve_cells(config);
      reserve != 0 && !buffer_.state().set_header_reserve(reserve)) {
    throw std::invalid_argument("[trimming] header_reserve: " + std::to_string(reserve) +
                                " cells on each of " + std::to_string(config.ports.size()) +
                                " ports do not fit in a buffer of " +
                                std::to_string(buffer_.layout().capacity_cells()) + " cells");
  }
  for (const PortConfig& p : config.ports)
    ports_.push_back({Scheduler(p.scheduler, p.num_queues, p.weights), {}, {}});
  for (const StaticMacConfig& m : config.static_macs)
    macs_.add_static(m.mac, m.port);
  policy_owner_ = make_policy(config.policy, config.policy_params);
  policy_owner_->on_install(buffer_.exact_view());
  buffer_.set_policy_uses_probes(policy_owner_->uses_probes(), options.now_ns);
  policy_.store(policy_owner_.get(), std::memory_order_release);
}

void SwitchModel::set_port_rate(uint32_t port, uint64_t rate_bps) {
  config_.ports.at(port).rate_bps = rate_bps;
  env_.port_rate_bps.resize(config_.ports.size());
  env_.port_rate_bps[port] = rate_bps;
}

std::unique_ptr<policies::Policy> SwitchModel::make_policy(std::string_view name,
                                                           const policies::Params& params) const {
  return policies::make_policy(name, params, env_);
}

std::unique_ptr<policies::Policy> SwitchModel::install_policy(
    std::unique_ptr<policies::Policy> next, uint64_t now_ns) {
  next->on_install(buffer_.view(now_ns));
  buffer_.set_policy_uses_probes(next->uses_probes(), now_ns);
  // seq_cst: the workers' epoch announcements (datapath/epochs.h) pair with it.
  policy_.store(next.get(), std::memory_order_seq_cst);
  std::swap(policy_owner_, next);
  return next;
}

OverflowStep SwitchModel::overflow_step(uint32_t worker, bool synthetic) {
  // trim_newest's coin: a seeded sequence per worker, so a run with one worker repeats (the
  // replay and ns-3 are worker 0).
  return OverflowStep(buffer_, trim_, tofino_, config_.trim.header_full_return, synthetic,
                      config_.trim.seed * 0x9E3779B97F4A7C15ull + worker + 1);
}

Forward forward_frame(MacTable& macs, const FabricTable& fabric, const ParsedFrame& parsed,
                      uint16_t in_port, uint64_t now_ns, uint32_t ports) noexcept {
  if (!parsed.src_is_group() && !fabric.is_fabric(in_port))
    macs.learn(mac_from_bytes(parsed.src_mac), in_port, now_ns);
  const auto flood = [&]() -> Forward {
    const uint64_t to = fabric.flood_mask(in_port, ports);
    if (to == 0) return {Forward::Kind::kFiltered, in_port, 0};
    return {Forward::Kind::kFlood, 0, to};
  };
  if (parsed.dst_is_group()) return flood();
  const MacAddress dst = mac_from_bytes(parsed.dst_mac);
  uint16_t out = MacTable::kNoPort;
  if (const std::span<const uint16_t> group = fabric.route(dst); !group.empty()) {
    out = group.size() == 1 ? group[0] : FabricTable::pick(group, flow_hash(parsed));
  } else {
    out = macs.lookup(dst, now_ns);
  }
  if (out == in_port) return {Forward::Kind::kFiltered, out, 0};
  if (out != MacTable::kNoPort && out < ports) return {Forward::Kind::kUnicast, out, 0};
  return flood();
}

}  // namespace sharebuf::model

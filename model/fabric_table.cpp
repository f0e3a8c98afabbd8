#include "model/fabric_table.h"

#include "model/switch_config.h"

namespace sharebuf::model {

FabricTable::FabricTable(const SwitchConfig& config) {
  for (size_t p = 0; p < config.ports.size() && p < 64; ++p)
    if (config.ports[p].fabric) fabric_ |= uint64_t{1} << p;
  for (const RouteConfig& r : config.routes)
    routes_[r.mac] = r.ports;
}

std::span<const uint16_t> FabricTable::route(MacAddress mac) const noexcept {
  if (routes_.empty()) return {};
  const auto it = routes_.find(mac);
  if (it == routes_.end()) return {};
  return it->second;
}

}  // namespace sharebuf::model

// FabricTable: what makes a switch a member of a fabric rather than a lone learning bridge — the
// static forwarding table ([[routes]]: a destination MAC to one port, or to an ECMP group of
// equal-cost ports picked per flow) and the port roles ([[ports]] role = "fabric": a link to
// another switch). Fabric ports never learn and are never flooded to, so a broadcast or an
// unknown destination stays on the switch's edge ports and no frame can circle the fabric: the
// only way across a fabric link is a route, and routes generated from a topology (up to a spine,
// down to the destination's leaf) hold no cycle.
//
// Thread-safety: read-only after construction (every RX worker looks up concurrently).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/mac_table.h"

namespace sharebuf::model {

struct SwitchConfig;

class FabricTable {
 public:
  FabricTable() = default;
  explicit FabricTable(const SwitchConfig& config);

  bool is_fabric(uint32_t port) const noexcept { return ((fabric_ >> port) & 1u) != 0; }
  bool empty() const noexcept { return fabric_ == 0 && routes_.empty(); }

  // The route's ports for `mac` (one: a plain route; several: its ECMP group), empty if none.
  std::span<const uint16_t> route(MacAddress mac) const noexcept;
  // One port of a group for a flow: the flow hash mixed again (murmur3's finaliser: flow_hash
  // spreads flows that differ only in a port number unevenly over its top bits, 16 of 64 on one
  // side in a test) and scaled to the group. The same flow always takes the same port.
  static uint16_t pick(std::span<const uint16_t> group, uint32_t flow_hash) noexcept {
    uint32_t h = flow_hash;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return group[static_cast<size_t>((uint64_t{h} * group.size()) >> 32)];
  }
  // The ports a flooded frame from `in_port` reaches: every other port that is not a fabric port
  // (every one of them for an ingress out of range: the replay's frames of unknown ingress).
  uint64_t flood_mask(uint16_t in_port, uint32_t ports) const noexcept {
    const uint64_t all = ports >= 64 ? ~uint64_t{0} : (uint64_t{1} << ports) - 1;
    const uint64_t in = in_port < 64 ? uint64_t{1} << in_port : 0;
    return all & ~fabric_ & ~in;
  }

 private:
  uint64_t fabric_ = 0;  // bit p: port p is a fabric port (at most 64 ports: the config's limit)
  std::unordered_map<MacAddress, std::vector<uint16_t>> routes_;
};

}  // namespace sharebuf::model

#include "mgmt/client_limits.h"

#include <optional>

namespace sharebuf::mgmt {
namespace {

// The open client idle longest among those `eligible` accepts.
template <typename Eligible>
std::optional<size_t> idlest(std::span<const ClientSlot> open, Eligible eligible) {
  std::optional<size_t> best;
  for (size_t i = 0; i < open.size(); ++i) {
    if (!eligible(open[i])) continue;
    if (!best || open[i].idle_since_ns < open[*best].idle_since_ns) best = i;
  }
  return best;
}

size_t count_uid(std::span<const ClientSlot> open, uint32_t uid, bool watches_only) {
  size_t n = 0;
  for (const ClientSlot& s : open)
    n += !s.is_operator && s.uid == uid && (!watches_only || s.watching);
  return n;
}

Admission evict(size_t victim, std::string reason) {
  return {Admission::Kind::kEvict, victim, std::move(reason)};
}

Admission refuse(std::string reason) {
  return {Admission::Kind::kRefuse, 0, std::move(reason)};
}

}  // namespace

Admission admit(std::span<const ClientSlot> open, const ClientSlot& newcomer,
                const ClientLimits& limits) {
  const std::string full = "the daemon serves at most " + std::to_string(limits.max_clients) +
                           " clients ([control] max_clients)";
  if (newcomer.is_operator) {
    if (open.size() < limits.max_clients) return {};
    // An operator's newcomer closes another peer's client first, a busy one if it must, and an
    // operator's only when no other peer holds a connection.
    const std::string why = full + " and this one was idle longest";
    if (auto v = idlest(open, [](const ClientSlot& s) { return !s.is_operator && !s.busy; }))
      return evict(*v, why + " (an operator needed the room)");
    if (auto v = idlest(open, [](const ClientSlot& s) { return !s.is_operator; }))
      return evict(*v, full + " and an operator needed the room");
    if (auto v = idlest(open, [](const ClientSlot& s) { return !s.busy; })) return evict(*v, why);
    return refuse(full + " and every one is busy");
  }
  const size_t same_uid = count_uid(open, newcomer.uid, false);
  if (same_uid >= limits.max_clients_per_uid) {
    return refuse("uid " + std::to_string(newcomer.uid) + " holds " + std::to_string(same_uid) +
                  " connections, the most one peer may ([control] max_clients_per_uid)");
  }
  size_t others = 0;
  for (const ClientSlot& s : open)
    others += !s.is_operator;
  const size_t share = limits.max_clients > limits.operator_reserve
                           ? limits.max_clients - limits.operator_reserve
                           : 0;
  if (others < share && open.size() < limits.max_clients) return {};
  if (auto v = idlest(open, [](const ClientSlot& s) { return !s.is_operator && !s.busy; }))
    return evict(*v, full + " and this one was idle longest");
  return refuse(full + " (" + std::to_string(limits.operator_reserve) +
                " reserved for operators, [control] operator_reserve) and every other one is busy");
}

std::string watch_refusal(std::span<const ClientSlot> open, const ClientSlot& peer,
                          const ClientLimits& limits) {
  if (peer.is_operator) return {};
  const size_t watches = count_uid(open, peer.uid, true);
  if (watches < limits.max_watches_per_uid) return {};
  return "uid " + std::to_string(peer.uid) + " has " + std::to_string(watches) +
         " watches open, the most one peer may ([control] max_watches_per_uid)";
}

}  // namespace sharebuf::mgmt

// Who gets a control connection when the daemon is full, and who is turned away. The operator
// must always get in, whatever the peers allowed on the socket do: a share of the connections is
// reserved for operators (root, the daemon's own user, members of [control] admin_group), every
// other uid holds at most a bounded number of connections and watches, and a newcomer makes room
// by closing a client of the other peers before an operator's. Pure logic over a snapshot of the
// open clients, so the rules are tested without sockets (ControlServer applies them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace sharebuf::mgmt {

struct ClientLimits {
  size_t max_clients = 1024;
  size_t operator_reserve = 8;      // connections other peers may never take
  size_t max_clients_per_uid = 64;  // per uid of the other peers
  size_t max_watches_per_uid = 4;   // per uid of the other peers
};

// What admission needs of one open client.
struct ClientSlot {
  uint32_t uid = 0;
  bool is_operator = false;
  bool watching = false;
  bool busy = false;           // requests waiting or replies unsent: closing it loses work
  uint64_t idle_since_ns = 0;  // its connect or its last request (a watch: the watch request)
};

struct Admission {
  enum class Kind { kAccept, kEvict, kRefuse };
  Kind kind = Kind::kAccept;
  size_t victim = 0;   // with kEvict: the index in the snapshot of the client to close
  std::string reason;  // with kEvict / kRefuse: the error line's text, naming the limit
};

// Whether `newcomer` is let in beside `open` (clients already closing left out), and at whose
// cost. Operators are refused only when every open client is a busy operator; the other peers
// never close an operator's connection.
Admission admit(std::span<const ClientSlot> open, const ClientSlot& newcomer,
                const ClientLimits& limits);

// Whether a peer that is not an operator may open one more watch beside `open`; if not, the
// error text.
std::string watch_refusal(std::span<const ClientSlot> open, const ClientSlot& peer,
                          const ClientLimits& limits);

}  // namespace sharebuf::mgmt

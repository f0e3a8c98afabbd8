// ControlServer: the daemon's unix socket (newline-delimited JSON, see control_commands.h). One
// thread runs a poll() loop over the listening socket and every client; sockets are non-blocking
// and every client has bounded buffers, so a client that stalls, floods or vanishes costs only
// its own connection — the datapath never waits for the control plane, and the control thread
// never waits for a client.
//
// Limits ([control], README "Security model"):
//   - at most max_clients connections (default 1024); when full, the client idle longest (no
//     request for the longest time, not watching) is closed with an error line to admit the new
//     one; if every client is busy or watching, the new one gets the error line instead;
//   - a client that sends nothing for idle_timeout (default 300 s) is closed with an error line;
//   - a request line over 1 MiB gets an error and the connection is closed; a client whose
//     unread replies exceed 4 MiB is closed; watch samples are skipped (and counted in the next
//     sample as "skipped") while a client has over 256 KiB unread;
//   - fairness: each round of the loop reads at most 256 KiB of one client and serves at most
//     512 requests in all, the clients waiting longest first, each an equal share (at most 8,
//     one when more than 512 clients wait), so one client pipelining megabytes of requests, or a
//     thousand busy clients, delay a new request by about one request of each, not by all of
//     theirs; replies to a client that does not read them wait until it does (its requests are
//     not served meanwhile).
// The socket file never replaces anything but a stale socket; its mode and group come from
// [control]; every client's credentials (uid, gid, pid) are logged when it connects, and with
// admin_group set only admin peers may run the commands that change the switch.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "mgmt/control_commands.h"

namespace sharebuf::mgmt {

class ControlServer {
 public:
  // Creates the socket's directory if needed, replaces a stale socket file, refuses a path a
  // live daemon listens on or that is not a socket. Throws std::runtime_error saying which.
  ControlServer(ControlContext& ctx, std::string path);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void start();
  void stop();
  const std::string& path() const noexcept { return path_; }
  size_t clients_served() const noexcept { return served_.load(std::memory_order_relaxed); }

  static constexpr size_t kReadPerRound = 256 << 10;  // bytes read from one client per round
  static constexpr size_t kRequestsPerTurn = 8;       // most served of one client per round
  static constexpr size_t kRequestsPerRound = 512;    // requests served in all per round

 private:
  void loop();

  ControlContext& ctx_;
  std::string path_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  std::thread thread_;
  std::atomic<size_t> served_{0};
};

// The default socket path for a switch name: /run/sharebuf/<name>.sock.
std::string default_socket_path(const std::string& switch_name);

}  // namespace sharebuf::mgmt

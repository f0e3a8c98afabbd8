// ControlServer: the daemon's unix socket (newline-delimited JSON, see control_commands.h). One
// thread runs a poll() loop over the listening socket and every client; sockets are non-blocking
// and every client has bounded buffers, so a client that stalls, floods or vanishes costs only
// its own connection — the datapath never waits for the control plane.
//
// Limits: a request line over 1 MiB gets an error and the connection is closed; a client whose
// unread replies exceed 4 MiB is closed; watch samples are skipped (and counted in the next
// sample as "skipped") while a client has over 256 KiB unread; at most 256 clients at a time.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "mgmt/control_commands.h"

namespace sharebuf::mgmt {

class ControlServer {
 public:
  // Creates the socket's directory if needed, replaces a stale socket file, refuses a path a
  // live daemon listens on. Throws std::runtime_error saying which.
  ControlServer(ControlContext& ctx, std::string path);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void start();
  void stop();
  const std::string& path() const noexcept { return path_; }
  size_t clients_served() const noexcept { return served_.load(std::memory_order_relaxed); }

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

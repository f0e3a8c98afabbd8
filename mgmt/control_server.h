// ControlServer: the daemon's unix socket (newline-delimited JSON, see control_commands.h). One
// thread runs a poll() loop over the listening socket and every client; sockets are non-blocking
// and every client has bounded buffers, so a client that stalls, floods or vanishes costs only
// its own connection — the datapath never waits for the control plane, and the control thread
// never waits for a client.
//
// Operators (root, the daemon's own user, members of [control] admin_group) must always get in,
// whatever the other peers allowed on the socket do; the limits (docs/security.md):
//   - connections: at most max_clients, of which operator_reserve only operators may use; another
//     peer's uid holds at most max_clients_per_uid and max_watches_per_uid of them. When full, a
//     newcomer makes room by closing the client idle longest (a watch counts as idle since its
//     watch request), another peer's before an operator's; the other peers never close an
//     operator's client. Whoever is closed or refused gets an error line naming the limit;
//   - a client that sends nothing for idle_timeout is closed, and so is a watcher that reads
//     nothing for that long; a client being closed is given 1 s to read its last line;
//   - memory: a client is not read while it has over 256 KiB of complete requests waiting or
//     over 256 KiB of unread replies (backpressure: its own socket fills, not the daemon), a line
//     over 1 MiB closes it, a line still incomplete request_timeout after its first byte closes
//     it, a single reply over 4 MiB unread closes it; the other peers' buffers are charged to
//     their uid, each uid holding at most an equal share of 64 MiB (64 MiB / the number of such
//     uids connected): only a uid over its share stops being read;
//   - time: each round serves at most 512 requests, the clients waiting longest first, operators
//     before the others, each an equal share (at most 8, one when more than 512 wait), consumes
//     pipelined input in O(1) per request, and builds one watch sample for every watcher due;
//     the other peers' requests, reads, replies, watch samples and the accepts of their
//     connections together get at most cpu_share of a core (then they wait, and so does accept:
//     an operator's connection waits for the refill, a few ms), and their watches sample at most
//     every min_watch_interval;
//   - descriptors: accept pauses (no spin) while the open-file limit is reached, closing the
//     other peers' client idle longest to free one; sharebufd checks the limit against
//     max_clients at start.
// The socket file never replaces anything but a stale socket; its mode and group come from
// [control]; every client's credentials (uid, gid, pid) are logged when it connects (at most 20
// lines a second; the rest are counted), and with admin_group set only admin peers may run the
// commands that change the switch.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "mgmt/control_commands.h"

namespace sharebuf::mgmt {

class ControlServer {
 public:
  // The credentials of an accepted socket (uid, gid, pid); by default SO_PEERCRED. Tests give
  // peers of their own, since a test process can connect only as itself.
  using PeerOf = std::function<Peer(int fd)>;

  // Creates the socket's directory if needed, replaces a stale socket file, refuses a path a
  // live daemon listens on or that is not a socket. Throws std::runtime_error saying which.
  ControlServer(ControlContext& ctx, std::string path, PeerOf peer_of = {});
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void start();
  void stop();
  // Runs `task` on the control thread between two rounds (any thread may post): what must not
  // race the control commands, e.g. a configuration reload on SIGHUP. Tasks run in order.
  void post(std::function<void()> task);
  const std::string& path() const noexcept { return path_; }
  size_t clients_served() const noexcept { return served_.load(std::memory_order_relaxed); }

  static constexpr size_t kReadPerRound = 256 << 10;  // bytes read from one client per round
  static constexpr size_t kRequestsPerTurn = 8;       // most served of one client per round
  static constexpr size_t kRequestsPerRound = 512;    // requests served in all per round
  static constexpr size_t kAcceptsPerRound = 512;     // connections taken per round (the backlog)
  static constexpr size_t kInputHigh = 256 << 10;     // complete requests waiting: stop reading
  static constexpr size_t kOutputHigh = 256 << 10;    // unread replies: stop serving and reading
  static constexpr size_t kMaxUnsent = 4 << 20;       // unread replies that close a client
  static constexpr size_t kTotalHigh = 64 << 20;      // the other peers' buffers, shared by uid

  struct Client;

 private:
  void loop();
  int plan(uint64_t now);
  void run_posted();
  void accept_clients(uint64_t now);
  bool admit_client(int fd, uint64_t now);
  void read_clients(const std::vector<short>& revents, uint64_t now);
  void serve(uint64_t now);
  void serve_line(Client& c, std::string_view line, uint64_t now);
  bool send_and_reap(uint64_t now);
  void close_with(Client& c, const std::string& message, uint64_t now);
  bool may_work(const Client& c) const;
  void charge(const Client& c, uint64_t from_ns);
  const std::string& watch_sample();
  void log_connection(const std::string& line);

  ControlContext& ctx_;
  std::string path_;
  PeerOf peer_of_;
  std::optional<uint32_t> admin_gid_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  int task_fd_ = -1;  // eventfd: a task was posted
  std::mutex tasks_mutex_;
  std::vector<std::function<void()>> tasks_;  // under tasks_mutex_
  std::thread thread_;
  std::atomic<size_t> served_{0};

  // The loop's state (its thread only).
  std::vector<std::unique_ptr<Client>> clients_;
  uint64_t round_ = 0;
  uint64_t accept_paused_until_ = 0;  // the open-file limit was reached: accept again then
  int64_t budget_ns_ = 0;             // the other peers' CPU, refilled at cpu_share
  uint64_t budget_at_ns_ = 0;
  size_t buffered_ = 0;  // every client's buffers, as of the last round
  // The other peers' buffers per uid (from plan(), grown by what read_clients() reads) and each
  // uid's share of kTotalHigh.
  std::unordered_map<uint32_t, size_t> uid_bytes_;
  size_t uid_share_ = kTotalHigh;
  std::string sample_;          // this round's watch sample (empty: not built yet)
  uint64_t log_window_ns_ = 0;  // connection logging: lines in this second, and dropped
  size_t log_lines_ = 0;
  size_t log_dropped_ = 0;
};

// The default socket path for a switch name: /run/sharebuf/<name>.sock.
std::string default_socket_path(const std::string& switch_name);

}  // namespace sharebuf::mgmt

#include "mgmt/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>

namespace sharebuf::mgmt {
namespace {

constexpr size_t kMaxUnsent = 4 << 20;
constexpr size_t kServeBackpressure = 1 << 20;  // stop serving a client with this much unread
constexpr size_t kWatchBackoff = 256 << 10;

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof(a.sun_path))
    throw std::runtime_error("control socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

// A group given by name or number; throws if there is none.
gid_t group_id(const std::string& name, const char* key) {
  char* end = nullptr;
  const unsigned long n = std::strtoul(name.c_str(), &end, 10);
  if (!name.empty() && *end == '\0') return static_cast<gid_t>(n);
  if (const struct group* g = getgrnam(name.c_str())) return g->gr_gid;
  throw std::runtime_error(std::string("[control] ") + key + ": no group '" + name + "'");
}

struct Client {
  int fd = -1;
  std::string in;
  std::string out;
  bool closing = false;  // close once `out` is sent
  bool eof = false;      // the client closed its side
  bool watching = false;
  uint64_t interval_ns = 0;
  uint64_t next_ns = 0;
  uint64_t skipped = 0;
  uint64_t last_request_ns = 0;  // connect or last request: idle timeout and eviction
  uint64_t served_round = 0;     // the last loop round its requests were served in
  bool dead = false;             // closed this round
  Peer peer;
};

// Whether `in` holds a complete request line.
bool has_line(const Client& c) {
  return c.in.find('\n') != std::string::npos;
}

}  // namespace

std::string default_socket_path(const std::string& switch_name) {
  return "/run/sharebuf/" + switch_name + ".sock";
}

ControlServer::ControlServer(ControlContext& ctx, std::string path)
    : ctx_(ctx), path_(std::move(path)) {
  const sockaddr_un addr = address_of(path_);
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  const ControlConfig& cc = ctx_.config.control;
  const bool group_set = !cc.socket_group.empty();
  const gid_t socket_gid = group_set ? group_id(cc.socket_group, "socket_group") : 0;
  if (!cc.admin_group.empty()) (void)group_id(cc.admin_group, "admin_group");
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw sys_error("control socket");
  struct stat st {};
  if (lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      close(listen_fd_);
      throw std::runtime_error("control socket " + path_ +
                               ": the path exists and is not a socket; refusing to replace it "
                               "(set [control] socket or --socket)");
    }
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live =
        probe >= 0 && connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
    if (probe >= 0) close(probe);
    if (live) {
      close(listen_fd_);
      throw std::runtime_error("control socket " + path_ +
                               " is in use by another daemon (set [control] socket)");
    }
    unlink(path_.c_str());  // a stale socket, from a daemon that did not stop cleanly
  }
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const auto e = sys_error("control socket " + path_);
    close(listen_fd_);
    throw e;
  }
  if (chmod(path_.c_str(), cc.socket_mode) != 0 ||
      (group_set && chown(path_.c_str(), static_cast<uid_t>(-1), socket_gid) != 0)) {
    const auto e = sys_error("control socket " + path_ + ": mode/group");
    close(listen_fd_);
    unlink(path_.c_str());
    throw e;
  }
  if (listen(listen_fd_, 512) != 0) {
    const auto e = sys_error("listen on " + path_);
    close(listen_fd_);
    unlink(path_.c_str());
    throw e;
  }
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

ControlServer::~ControlServer() {
  stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
  unlink(path_.c_str());
}

void ControlServer::start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "sb-control");
    loop();
  });
}

void ControlServer::stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(stop_fd_, &one, sizeof(one));
  thread_.join();
}

void ControlServer::loop() {
  const ControlConfig& cc = ctx_.config.control;
  const bool any_admin = cc.admin_group.empty();
  const gid_t admin_gid = any_admin ? 0 : group_id(cc.admin_group, "admin_group");
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<pollfd> fds;
  bool more_to_serve = false;  // a client has requests left after its share of the last round
  uint64_t round = 0;
  std::vector<Client*> ready;
  for (;;) {
    const uint64_t now = datapath::monotonic_ns();
    // Retired policies and captures that no worker can hold any more are freed here; while some
    // wait, poll wakes every 100 ms to look again.
    const bool waiting = ctx_.sw.reclaim() != 0;
    int timeout_ms = more_to_serve ? 0 : waiting ? 100 : -1;
    auto wake_in = [&](uint64_t at_ns) {
      const uint64_t wait_ns = at_ns > now ? at_ns - now : 0;
      const int ms = static_cast<int>(std::min<uint64_t>((wait_ns + 999'999) / 1'000'000, 60'000));
      timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
    };
    for (auto& c : clients) {
      if (c->closing) continue;
      if (c->watching) {
        // Watch samples that are due; the poll timeout is the next one.
        if (now >= c->next_ns) {
          if (c->out.size() < kWatchBackoff) {
            nlohmann::json s = ctx_.sw.watch_sample();
            if (c->skipped != 0) s["skipped"] = c->skipped;
            c->out += s.dump() + "\n";
          } else {
            ++c->skipped;  // the client reads slower than we sample
          }
          c->next_ns = std::max(now, c->next_ns + c->interval_ns);
        }
        wake_in(c->next_ns);
      } else if (now - c->last_request_ns >= cc.idle_timeout_ns) {
        c->out += error_reply("closing: no request for " +
                              std::to_string(cc.idle_timeout_ns / 1'000'000'000) +
                              " s ([control] idle_timeout)")
                      .dump() +
                  "\n";
        c->closing = true;
      } else {
        wake_in(c->last_request_ns + cc.idle_timeout_ns);
      }
    }

    fds.clear();
    fds.push_back({stop_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto& c : clients) {
      short events = c->closing || c->eof ? 0 : POLLIN;
      if (!c->out.empty()) events |= POLLOUT;
      fds.push_back({c->fd, events, 0});
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      spdlog::error("control socket: poll: {}", std::strerror(errno));
      break;
    }
    if (fds[0].revents != 0) break;

    if (fds[1].revents & POLLIN) {
      for (;;) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        auto c = std::make_unique<Client>();
        c->fd = fd;
        c->last_request_ns = now;
        ucred cred{};
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
          c->peer.uid = cred.uid;
          c->peer.gid = cred.gid;
          c->peer.pid = cred.pid;
        }
        c->peer.admin =
            any_admin || c->peer.uid == 0 || c->peer.uid == geteuid() || c->peer.gid == admin_gid;
        spdlog::info("control client connected: uid {}, gid {}, pid {}{}", c->peer.uid, c->peer.gid,
                     c->peer.pid, c->peer.admin ? "" : " (read-only)");
        served_.fetch_add(1, std::memory_order_relaxed);
        size_t open = 0;
        Client* idlest = nullptr;
        for (auto& o : clients) {
          if (o->closing) continue;
          ++open;
          if (!o->watching && !has_line(*o) && o->out.empty() &&
              (idlest == nullptr || o->last_request_ns < idlest->last_request_ns))
            idlest = o.get();
        }
        if (open >= cc.max_clients) {
          // Full: the client idle longest makes room; if every client is busy, the new one waits
          // for nothing and is told so.
          Client* victim = idlest != nullptr ? idlest : c.get();
          victim->out +=
              error_reply("closing: the daemon serves at most " + std::to_string(cc.max_clients) +
                          " clients ([control] max_clients)" +
                          (victim == c.get() ? "" : " and this one was idle longest"))
                  .dump() +
              "\n";
          victim->closing = true;
        }
        clients.push_back(std::move(c));
      }
    }

    ++round;
    // 1. Read each client's share of this round.
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& c = *clients[i];
      const short re = i + 2 < fds.size() && fds[i + 2].fd == c.fd ? fds[i + 2].revents : 0;
      if ((re & (POLLERR | POLLNVAL)) != 0) c.dead = true;
      if (!c.dead && (re & (POLLIN | POLLHUP)) && !c.closing && !c.eof) {
        char buf[65536];
        for (size_t got = 0; got < kReadPerRound;) {
          const ssize_t n = read(c.fd, buf, sizeof(buf));
          if (n > 0) {
            got += static_cast<size_t>(n);
            if (!c.watching) c.in.append(buf, static_cast<size_t>(n));
            continue;
          }
          if (n == 0) c.eof = true;
          if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) c.dead = true;
          break;
        }
        if (c.in.size() > kMaxRequestBytes + 1 && !has_line(c)) {
          c.out += error_reply("request longer than 1 MiB").dump() + "\n";
          c.closing = true;
          c.in.clear();
        }
      }
      // A last request without its newline before the client closed its side is a request too.
      if (c.eof && !c.watching && !c.in.empty() && !has_line(c)) c.in += '\n';
    }

    // 2. Serve requests: the clients waiting longest first, at most kRequestsPerRound in all,
    // each an equal share of that (one request when more than kRequestsPerRound clients wait, at
    // most kRequestsPerTurn), so a client pipelining thousands of requests, or a thousand clients
    // pipelining some, keep a new client waiting about two rounds: one request of each of them.
    ready.clear();
    for (auto& c : clients) {
      if (!c->dead && !c->closing && !c->watching && has_line(*c) &&
          c->out.size() < kServeBackpressure)
        ready.push_back(c.get());
    }
    std::sort(ready.begin(), ready.end(),
              [](const Client* x, const Client* y) { return x->served_round < y->served_round; });
    size_t budget = kRequestsPerRound;
    const size_t per_turn = std::clamp<size_t>(
        kRequestsPerRound / std::max<size_t>(ready.size(), 1), 1, kRequestsPerTurn);
    for (Client* cp : ready) {
      if (budget == 0) break;
      Client& c = *cp;
      c.served_round = round;
      size_t start = 0;
      size_t served = 0;
      for (size_t nl; !c.closing && !c.watching && served < per_turn && budget > 0 &&
                      (nl = c.in.find('\n', start)) != std::string::npos;
           start = nl + 1) {
        std::string_view line(c.in.data() + start, nl - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        ++served;
        --budget;
        c.last_request_ns = now;
        if (line.size() > kMaxRequestBytes) {
          c.out += error_reply("request longer than 1 MiB").dump() + "\n";
          c.closing = true;
          break;
        }
        nlohmann::json reply;
        try {
          const ParsedRequest req = parse_request(line);
          if (req.cmd == "watch") {
            c.interval_ns = watch_interval_ns(req.args);
            c.watching = true;
            c.next_ns = datapath::monotonic_ns();
            reply = {{"ok", true},
                     {"result", {{"watching", true}, {"interval_ns", c.interval_ns}}}};
            if (!req.id.is_null()) reply["id"] = req.id;
          } else {
            reply = handle_request(ctx_, line, c.peer);
          }
        } catch (const RequestError& e) {
          reply = error_reply(e.what(), nullptr, e.code());
        }
        c.out += reply.dump() + "\n";
      }
      c.in.erase(0, std::min(start, c.in.size()));
    }

    // 3. Send, and close what is finished.
    more_to_serve = false;
    for (auto& cp : clients) {
      Client& c = *cp;
      const bool pending = !c.closing && !c.watching && has_line(c);
      if (pending && c.out.size() < kServeBackpressure) more_to_serve = true;
      // The client closed its side: a watch ends; otherwise send the replies, then close.
      if (c.eof && !pending) {
        if (c.watching) {
          c.dead = true;
        } else {
          c.closing = true;
        }
      }
      if (!c.dead && !c.out.empty()) {
        const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          c.out.erase(0, static_cast<size_t>(n));
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
          c.dead = true;
        }
        if (c.out.size() > kMaxUnsent) c.dead = true;  // a client that does not read
      }
      if (c.closing && c.out.empty()) c.dead = true;
      if (c.dead) close(c.fd);
    }
    std::erase_if(clients, [](const std::unique_ptr<Client>& c) { return c->dead; });
  }
  for (auto& c : clients)
    close(c->fd);
}

}  // namespace sharebuf::mgmt

#include "mgmt/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>

namespace sharebuf::mgmt {
namespace {

constexpr size_t kMaxClients = 256;
constexpr size_t kMaxUnsent = 4 << 20;
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

struct Client {
  int fd = -1;
  std::string in;
  std::string out;
  bool closing = false;  // close once `out` is sent
  bool watching = false;
  uint64_t interval_ns = 0;
  uint64_t next_ns = 0;
  uint64_t skipped = 0;
};

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
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw sys_error("control socket");
  if (std::filesystem::exists(path_, ec)) {
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live =
        probe >= 0 && connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
    if (probe >= 0) close(probe);
    if (live) {
      close(listen_fd_);
      throw std::runtime_error("control socket " + path_ +
                               " is in use by another daemon (set [control] socket)");
    }
    unlink(path_.c_str());  // stale, from a daemon that did not stop cleanly
  }
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const auto e = sys_error("control socket " + path_);
    close(listen_fd_);
    throw e;
  }
  chmod(path_.c_str(), 0660);
  if (listen(listen_fd_, 128) != 0) {
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
  thread_ = std::thread([this] { loop(); });
}

void ControlServer::stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(stop_fd_, &one, sizeof(one));
  thread_.join();
}

void ControlServer::loop() {
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<pollfd> fds;
  for (;;) {
    const uint64_t now = datapath::monotonic_ns();
    // Retired policies and captures that no worker can hold any more are freed here; while some
    // wait, poll wakes every 100 ms to look again.
    const bool waiting = ctx_.core.reclaim() != 0;
    // Watch samples that are due; the poll timeout is the next one.
    int timeout_ms = waiting ? 100 : -1;
    for (auto& c : clients) {
      if (!c->watching || c->closing) continue;
      if (now >= c->next_ns) {
        if (c->out.size() < kWatchBackoff) {
          nlohmann::json s = watch_sample(ctx_.core);
          if (c->skipped != 0) s["skipped"] = c->skipped;
          c->out += s.dump() + "\n";
        } else {
          ++c->skipped;  // the client reads slower than we sample
        }
        c->next_ns = std::max(now, c->next_ns + c->interval_ns);
      }
      const uint64_t wait_ns = c->next_ns > now ? c->next_ns - now : 0;
      const int ms = static_cast<int>((wait_ns + 999'999) / 1'000'000);
      timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
    }

    fds.clear();
    fds.push_back({stop_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto& c : clients) {
      short events = c->closing ? 0 : POLLIN;
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
        ucred cred{};
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
          spdlog::debug("control client connected: uid {}, pid {}", cred.uid, cred.pid);
        served_.fetch_add(1, std::memory_order_relaxed);
        auto c = std::make_unique<Client>();
        c->fd = fd;
        if (clients.size() >= kMaxClients) {
          c->out = error_reply("too many control clients").dump() + "\n";
          c->closing = true;
        }
        clients.push_back(std::move(c));
      }
    }

    for (size_t i = 0; i < clients.size(); ++i) {
      Client& c = *clients[i];
      const short re = i + 2 < fds.size() && fds[i + 2].fd == c.fd ? fds[i + 2].revents : 0;
      bool dead = (re & (POLLERR | POLLNVAL)) != 0;
      if (!dead && (re & (POLLIN | POLLHUP)) && !c.closing) {
        char buf[65536];
        bool eof = false;
        for (;;) {
          const ssize_t n = read(c.fd, buf, sizeof(buf));
          if (n > 0) {
            if (!c.watching) c.in.append(buf, static_cast<size_t>(n));
            if (c.in.size() > kMaxRequestBytes + 1 && c.in.find('\n') == std::string::npos) {
              c.out += error_reply("request longer than 1 MiB").dump() + "\n";
              c.closing = true;
              c.in.clear();
              break;
            }
            continue;
          }
          if (n == 0) eof = true;
          if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) dead = true;
          break;
        }
        // Every complete line is one request.
        size_t start = 0;
        for (size_t nl;
             !c.closing && !c.watching && (nl = c.in.find('\n', start)) != std::string::npos;
             start = nl + 1) {
          std::string_view line(c.in.data() + start, nl - start);
          if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
          if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
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
              reply = handle_request(ctx_, line);
            }
          } catch (const RequestError& e) {
            reply = error_reply(e.what());
          }
          c.out += reply.dump() + "\n";
        }
        c.in.erase(0, std::min(start, c.in.size()));
        // The client closed its side: a watch ends; otherwise send the replies, then close.
        if (eof) {
          if (c.watching) {
            dead = true;
          } else {
            c.closing = true;
          }
        }
      }
      if (!dead && !c.out.empty()) {
        const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          c.out.erase(0, static_cast<size_t>(n));
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
          dead = true;
        }
        if (c.out.size() > kMaxUnsent) dead = true;  // a client that does not read
      }
      if (c.closing && c.out.empty()) dead = true;
      if (dead) {
        close(c.fd);
        clients[i] = std::move(clients.back());
        clients.pop_back();
        // fds no longer matches the moved client; it is handled in the next iteration.
        fds.resize(std::min(fds.size(), i + 2));
        --i;
      }
    }
  }
  for (auto& c : clients)
    close(c->fd);
}

}  // namespace sharebuf::mgmt

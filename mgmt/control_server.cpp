#include "mgmt/control_server.h"

#include <errno.h>
#include <fcntl.h>
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

#include "common/safe_output.h"
#include "mgmt/client_limits.h"

namespace sharebuf::mgmt {
namespace {

constexpr size_t kWatchBackoff = 256 << 10;        // a watcher with this much unread skips samples
constexpr size_t kKeepCapacity = 64 << 10;         // an empty buffer larger than this is freed
constexpr uint64_t kCloseGraceNs = 1'000'000'000;  // to read the last line before the close
constexpr uint64_t kAcceptRetryNs = 100'000'000;   // after EMFILE, if no client closes first
constexpr int64_t kBudgetBurstNs = 20'000'000;     // the other peers' CPU, saved up at most
constexpr size_t kLogLinesPerSecond = 20;

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

// A group named in [control]; the loader checked it, but a group can go while the daemon runs.
uint32_t group_id(const std::string& name, const char* key) {
  if (const auto g = lookup_group(name)) return *g;
  throw std::runtime_error(std::string("[control] ") + key + ": no group '" + name + "'");
}

Peer peer_credentials(int fd) {
  Peer p;
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    p.uid = cred.uid;
    p.gid = cred.gid;
    p.pid = cred.pid;
  } else {
    p.uid = p.gid = 65534;  // unknown: treated as nobody, never as root
  }
  return p;
}

std::string line_of(const nlohmann::json& j) {
  return j.dump() + "\n";
}

// Drops the consumed front of a buffer read from `off`: in O(1) per byte, since the buffer is
// moved only once the consumed front outweighs the rest (erasing the front per request made a
// multi-MB pipeline quadratic).
void compact(std::string& s, size_t& off) {
  if (off == s.size()) {
    s.clear();
    off = 0;
  } else if (off > kKeepCapacity && off * 2 > s.size()) {
    s.erase(0, off);
    off = 0;
  }
}

void free_if_large(std::string& s) {
  if (s.empty() && s.capacity() > kKeepCapacity) std::string().swap(s);
}

}  // namespace

struct ControlServer::Client {
  int fd = -1;
  Peer peer;
  bool is_operator = false;  // root, the daemon's user, admin_group: never limited by others
  std::string in;            // bytes read; requests start at in_off
  size_t in_off = 0;
  size_t lines = 0;  // complete request lines in in[in_off..]
  std::string out;   // replies; unsent from out_off
  size_t out_off = 0;
  bool polled_in = false;  // asked poll() for input this round
  bool closing = false;    // close once `out` is sent (or at close_by_ns)
  uint64_t close_by_ns = 0;
  bool eof = false;   // the client closed its side
  bool dead = false;  // closed this round
  bool watching = false;
  uint64_t interval_ns = 0;
  uint64_t next_ns = 0;
  uint64_t skipped = 0;
  uint64_t last_request_ns = 0;   // connect or last request: idle timeout and eviction
  uint64_t last_progress_ns = 0;  // a byte sent to it: a watcher's idle timeout
  uint64_t served_round = 0;      // the last loop round its requests were served in
  uint64_t partial_since_ns = 0;  // the first byte of the incomplete line at the end of `in`

  size_t pending_in() const { return in.size() - in_off; }
  size_t pending_out() const { return out.size() - out_off; }
  bool busy() const { return lines != 0 || pending_out() != 0; }
  ClientSlot slot() const { return {peer.uid, is_operator, watching, busy(), last_request_ns}; }
};

std::string default_socket_path(const std::string& switch_name) {
  return "/run/sharebuf/" + switch_name + ".sock";
}

ControlServer::ControlServer(ControlContext& ctx, std::string path, PeerOf peer_of)
    : ctx_(ctx), path_(std::move(path)), peer_of_(peer_of ? std::move(peer_of) : peer_credentials) {
  const sockaddr_un addr = address_of(path_);
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  // Whoever may replace entries in the directory could put a socket of their own in its place
  // and take the operator's commands.
  if (const std::string why = common::unsafe_directory(dir.empty() ? "." : dir.string());
      !why.empty())
    throw std::runtime_error("control socket " + path_ + ": " + why);
  const ControlConfig& cc = ctx_.config.control;
  const bool group_set = !cc.socket_group.empty();
  const gid_t socket_gid = group_set ? group_id(cc.socket_group, "socket_group") : 0;
  if (!cc.admin_group.empty()) admin_gid_ = group_id(cc.admin_group, "admin_group");
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
  task_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0 || task_fd_ < 0) {
    const auto e = sys_error("control socket: eventfd");
    close(listen_fd_);
    unlink(path_.c_str());
    throw e;
  }
}

ControlServer::~ControlServer() {
  stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
  if (task_fd_ >= 0) close(task_fd_);
  unlink(path_.c_str());
}

void ControlServer::post(std::function<void()> task) {
  {
    std::lock_guard lock(tasks_mutex_);
    tasks_.push_back(std::move(task));
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(task_fd_, &one, sizeof(one));
}

void ControlServer::run_posted() {
  uint64_t count;
  [[maybe_unused]] const ssize_t r = read(task_fd_, &count, sizeof count);
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(tasks_mutex_);
    tasks.swap(tasks_);
  }
  for (auto& t : tasks)
    t();
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
  budget_at_ns_ = datapath::monotonic_ns();
  budget_ns_ = kBudgetBurstNs;
  std::vector<pollfd> fds;
  std::vector<short> revents;
  for (;;) {
    const uint64_t now = datapath::monotonic_ns();
    const int timeout_ms = plan(now);
    // New connections are taken while the other peers' budget lasts: a peer looping connect()
    // pays for the accepts it causes (an operator's connection waits for the refill, a few ms).
    const bool accepting = now >= accept_paused_until_ && budget_ns_ > 0;
    fds.clear();
    fds.push_back({stop_fd_, POLLIN, 0});
    fds.push_back({task_fd_, POLLIN, 0});
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    for (auto& c : clients_) {
      // Backpressure: a client is read only while it has room for more, so a client that sends
      // faster than it reads fills its own socket, not the daemon's memory.
      c->polled_in = !c->closing && !c->eof && may_work(*c) && c->pending_out() < kOutputHigh &&
                     (c->watching || c->lines == 0 || c->pending_in() < kInputHigh) &&
                     (c->is_operator || uid_bytes_[c->peer.uid] < uid_share_);
      short events = c->polled_in ? POLLIN : 0;
      if (c->pending_out() != 0) events |= POLLOUT;
      fds.push_back({c->fd, events, 0});
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      spdlog::error("control socket: poll: {}", std::strerror(errno));
      break;
    }
    if (fds[0].revents != 0) break;
    if (fds[1].revents != 0) run_posted();
    revents.clear();
    for (size_t i = 3; i < fds.size(); ++i)
      revents.push_back(fds[i].revents);
    const uint64_t woke = datapath::monotonic_ns();
    ++round_;
    if (fds[2].revents & POLLIN) accept_clients(woke);
    read_clients(revents, woke);
    serve(woke);
    if (send_and_reap(woke)) accept_paused_until_ = 0;  // a descriptor is free again
  }
  for (auto& c : clients_)
    close(c->fd);
  clients_.clear();
}

// Before waiting: refills the other peers' CPU budget, adds the watch samples that are due,
// closes clients idle too long, and returns poll()'s timeout: the next thing due.
int ControlServer::plan(uint64_t now) {
  const ControlConfig& cc = ctx_.config.control;
  budget_ns_ = std::min<int64_t>(
      kBudgetBurstNs,
      budget_ns_ + static_cast<int64_t>(static_cast<double>(now - budget_at_ns_) * cc.cpu_share));
  budget_at_ns_ = now;
  sample_.clear();
  // Retired policies and captures that no worker can hold any more are freed here; while some
  // wait, poll wakes every 100 ms to look again.
  int timeout_ms = ctx_.sw.reclaim() != 0 ? 100 : -1;
  auto wake_at = [&](uint64_t at_ns) {
    const uint64_t wait_ns = at_ns > now ? at_ns - now : 0;
    const int ms = static_cast<int>(std::min<uint64_t>((wait_ns + 999'999) / 1'000'000, 60'000));
    timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
  };
  buffered_ = 0;
  uid_bytes_.clear();
  for (auto& cp : clients_) {
    const size_t bytes = cp->in.capacity() + cp->out.capacity();
    buffered_ += bytes;
    if (!cp->is_operator) uid_bytes_[cp->peer.uid] += bytes;
  }
  // Each uid of the other peers an equal share: one uid's stalled requests can hold no more,
  // however many connections it opens, and only that uid stops being read.
  uid_share_ = kTotalHigh / std::max<size_t>(1, uid_bytes_.size());
  for (auto& cp : clients_) {
    Client& c = *cp;
    if (c.closing) {
      wake_at(c.close_by_ns);
      continue;
    }
    if (c.partial_since_ns != 0) {
      if (now - c.partial_since_ns >= cc.request_timeout_ns) {
        close_with(c,
                   "closing: a request line incomplete for " +
                       std::to_string(cc.request_timeout_ns / 1'000'000) +
                       " ms ([control] request_timeout)",
                   now);
        wake_at(c.close_by_ns);
        continue;
      }
      wake_at(c.partial_since_ns + cc.request_timeout_ns);
    }
    // Requests read but not served yet (a turn's share was used up): no waiting.
    if (!c.watching && c.lines != 0 && c.pending_out() < kOutputHigh && may_work(c)) timeout_ms = 0;
    if (c.watching) {
      if (now >= c.next_ns) {
        if (c.pending_out() < kWatchBackoff && may_work(c)) {
          const uint64_t t0 = datapath::monotonic_ns();
          const bool built = sample_.empty();
          const std::string& s = watch_sample();
          if (c.skipped == 0) {
            c.out += s;
          } else {  // the same sample with how many this client missed: `..."queues":[...]}` + n
            c.out.append(s, 0, s.size() - 2);
            c.out += ",\"skipped\":" + std::to_string(c.skipped) + "}\n";
          }
          if (built) charge(c, t0);
        } else {
          ++c.skipped;  // the client reads slower than we sample (or its peer's budget is spent)
        }
        c.next_ns = std::max(now, c.next_ns + c.interval_ns);
      }
      wake_at(c.next_ns);
      if (c.pending_out() >= kWatchBackoff && now - c.last_progress_ns >= cc.idle_timeout_ns) {
        close_with(c,
                   "closing: no sample read for " +
                       std::to_string(cc.idle_timeout_ns / 1'000'000'000) +
                       " s ([control] idle_timeout)",
                   now);
      }
    } else if (now - c.last_request_ns >= cc.idle_timeout_ns) {
      close_with(c,
                 "closing: no request for " + std::to_string(cc.idle_timeout_ns / 1'000'000'000) +
                     " s ([control] idle_timeout)",
                 now);
      wake_at(c.close_by_ns);
    } else {
      wake_at(c.last_request_ns + cc.idle_timeout_ns);
    }
  }
  // The other peers' work (and new connections) held back by the budget: wake when it refills.
  if (budget_ns_ <= 0) {
    wake_at(now + static_cast<uint64_t>(static_cast<double>(1 - budget_ns_) / cc.cpu_share));
  }
  if (accept_paused_until_ > now) wake_at(accept_paused_until_);
  return timeout_ms;
}

// Operators always; the other peers while their CPU budget lasts.
bool ControlServer::may_work(const Client& c) const {
  return c.is_operator || budget_ns_ > 0;
}

// The time since `from_ns`, charged to the other peers' budget when `c` is one of them.
void ControlServer::charge(const Client& c, uint64_t from_ns) {
  if (!c.is_operator) budget_ns_ -= static_cast<int64_t>(datapath::monotonic_ns() - from_ns);
}

// One sample per round, shared by every watcher due in it.
const std::string& ControlServer::watch_sample() {
  if (sample_.empty()) sample_ = line_of(ctx_.sw.watch_sample());
  return sample_;
}

void ControlServer::close_with(Client& c, const std::string& message, uint64_t now) {
  c.out += line_of(error_reply(message));
  c.closing = true;
  c.close_by_ns = now + kCloseGraceNs;
  c.in.clear();
  c.in_off = 0;
  c.lines = 0;
  c.partial_since_ns = 0;
}

// Connection log lines, at most kLogLinesPerSecond: a peer looping connect() must not turn the
// control thread into a log writer.
void ControlServer::log_connection(const std::string& line) {
  const uint64_t now = datapath::monotonic_ns();
  if (now - log_window_ns_ >= 1'000'000'000) {
    if (log_dropped_ != 0)
      spdlog::warn("{} more control connections in the last second (not logged one by one)",
                   log_dropped_);
    log_window_ns_ = now;
    log_lines_ = 0;
    log_dropped_ = 0;
  }
  if (log_lines_ < kLogLinesPerSecond) {
    ++log_lines_;
    spdlog::info("{}", line);
  } else {
    ++log_dropped_;
  }
}

void ControlServer::accept_clients(uint64_t now) {
  for (size_t n = 0; n < kAcceptsPerRound && budget_ns_ > 0; ++n) {
    const uint64_t t0 = datapath::monotonic_ns();
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      if (!admit_client(fd, now)) budget_ns_ -= static_cast<int64_t>(datapath::monotonic_ns() - t0);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // Out of descriptors: poll() would report the waiting connection at once, forever. Wait
      // for a client to close (or 100 ms), and close the other peers' client idle longest now.
      accept_paused_until_ = now + kAcceptRetryNs;
      Client* victim = nullptr;
      for (auto& c : clients_) {
        if (c->is_operator || c->closing) continue;
        if (victim == nullptr || (victim->busy() && !c->busy()) ||
            (victim->busy() == c->busy() && c->last_request_ns < victim->last_request_ns))
          victim = c.get();
      }
      if (victim != nullptr) {
        close_with(*victim,
                   "closing: the daemon is out of file descriptors and this client was "
                   "idle longest",
                   now);
      }
      log_connection(std::string("control socket: accept: ") + std::strerror(errno) +
                     "; accepting again when a client closes");
    }
    return;
  }
}

// Whether the newcomer is an operator (whose accept is not charged to the other peers).
bool ControlServer::admit_client(int fd, uint64_t now) {
  const ControlConfig& cc = ctx_.config.control;
  auto c = std::make_unique<Client>();
  c->fd = fd;
  c->last_request_ns = c->last_progress_ns = now;
  c->peer = peer_of_(fd);
  c->is_operator =
      c->peer.uid == 0 || c->peer.uid == geteuid() || (admin_gid_ && c->peer.gid == *admin_gid_);
  c->peer.admin = !admin_gid_ || c->is_operator;
  served_.fetch_add(1, std::memory_order_relaxed);
  std::vector<ClientSlot> open;
  std::vector<Client*> who;
  for (auto& o : clients_) {
    if (o->closing || o->dead) continue;
    open.push_back(o->slot());
    who.push_back(o.get());
  }
  const Admission a = mgmt::admit(open, c->slot(), cc.limits());
  const std::string peer = "uid " + std::to_string(c->peer.uid) + ", gid " +
                           std::to_string(c->peer.gid) + ", pid " + std::to_string(c->peer.pid);
  if (a.kind == Admission::Kind::kRefuse) {
    const std::string text = line_of(error_reply("closing: " + a.reason));
    [[maybe_unused]] const ssize_t n = send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    close(fd);
    log_connection("control client refused: " + peer + ": " + a.reason);
    return c->is_operator;
  }
  if (a.kind == Admission::Kind::kEvict) close_with(*who[a.victim], "closing: " + a.reason, now);
  log_connection("control client connected: " + peer + (c->peer.admin ? "" : " (read-only)") +
                 (c->is_operator ? " (operator)" : ""));
  const bool is_operator = c->is_operator;
  clients_.push_back(std::move(c));
  return is_operator;
}

void ControlServer::read_clients(const std::vector<short>& revents, uint64_t now) {
  for (size_t i = 0; i < clients_.size(); ++i) {
    Client& c = *clients_[i];
    const short re = i < revents.size() ? revents[i] : 0;
    if ((re & (POLLERR | POLLNVAL)) != 0) c.dead = true;
    // Gone for good while held back by its budget: poll() would report the hang-up every round
    // until the budget refills, and no one is left to read a reply.
    if ((re & POLLHUP) && !c.polled_in && !c.is_operator && c.pending_out() == 0) c.dead = true;
    // The budget is checked per client, not only before poll(): a round of 64 peers each sending
    // kReadPerRound cost a slow build (TSan under two CPU hogs) over 300 ms at once, a debt that
    // kept every other peer, another uid's first request too, waiting 6 s for the refill.
    if (!c.dead && c.polled_in && may_work(c) && (re & (POLLIN | POLLHUP))) {
      const uint64_t t0 = datapath::monotonic_ns();
      char buf[65536];
      // The other peers read no further than their uid's share (plan()).
      size_t* held = c.is_operator ? nullptr : &uid_bytes_[c.peer.uid];
      const size_t limit = held == nullptr
                               ? kReadPerRound
                               : std::min(kReadPerRound, uid_share_ - std::min(uid_share_, *held));
      bool newline = false;
      for (size_t got = 0; got < limit;) {
        const ssize_t n = read(c.fd, buf, std::min(sizeof(buf), limit - got));
        if (n > 0) {
          got += static_cast<size_t>(n);
          if (held != nullptr) *held += static_cast<size_t>(n);
          if (c.watching) {
            close_with(c, "closing: a watch takes no further requests", now);
            break;
          }
          c.in.append(buf, static_cast<size_t>(n));
          for (const char* p = buf; (p = static_cast<const char*>(
                                         std::memchr(p, '\n', static_cast<size_t>(buf + n - p))));
               ++p) {
            ++c.lines;
            newline = true;
          }
          continue;
        }
        if (n == 0) c.eof = true;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) c.dead = true;
        break;
      }
      // The age of the line still incomplete at the end of the input: from its first byte.
      if (c.in.empty() || c.in.back() == '\n') {
        c.partial_since_ns = 0;
      } else if (c.partial_since_ns == 0 || newline) {
        c.partial_since_ns = now;
      }
      if (c.lines == 0 && c.pending_in() > kMaxRequestBytes) {
        close_with(c, "request longer than 1 MiB", now);
      }
      charge(c, t0);
    }
    // A last request without its newline before the client closed its side is a request too.
    if (c.eof && !c.watching && !c.closing && c.lines == 0 && c.pending_in() != 0) {
      c.in += '\n';
      ++c.lines;
    }
  }
}

// Serves requests: operators first, then the clients waiting longest, at most kRequestsPerRound
// in all, each an equal share of that (one request when more than kRequestsPerRound clients wait,
// at most kRequestsPerTurn), so a client pipelining thousands of requests, or a thousand clients
// pipelining some, keep a new client waiting about two rounds: one request of each of them.
void ControlServer::serve(uint64_t now) {
  std::vector<Client*> ready;
  for (auto& c : clients_) {
    if (!c->dead && !c->closing && !c->watching && c->lines != 0 &&
        c->pending_out() < kOutputHigh && may_work(*c))
      ready.push_back(c.get());
  }
  std::sort(ready.begin(), ready.end(), [](const Client* x, const Client* y) {
    if (x->is_operator != y->is_operator) return x->is_operator;
    return x->served_round < y->served_round;
  });
  size_t budget = kRequestsPerRound;
  const size_t per_turn = std::clamp<size_t>(kRequestsPerRound / std::max<size_t>(ready.size(), 1),
                                             1, kRequestsPerTurn);
  for (Client* cp : ready) {
    if (budget == 0) break;
    Client& c = *cp;
    c.served_round = round_;
    for (size_t served = 0; !c.closing && !c.watching && c.lines != 0 && served < per_turn &&
                            budget > 0 && may_work(c);
         ++served, --budget) {
      const char* begin = c.in.data() + c.in_off;
      const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', c.pending_in()));
      std::string_view line(begin, static_cast<size_t>(nl - begin));
      c.in_off += line.size() + 1;
      --c.lines;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
      const uint64_t t0 = datapath::monotonic_ns();
      serve_line(c, line, now);
      charge(c, t0);
    }
    compact(c.in, c.in_off);
  }
}

void ControlServer::serve_line(Client& c, std::string_view line, uint64_t now) {
  c.last_request_ns = now;
  if (line.size() > kMaxRequestBytes) {
    close_with(c, "request longer than 1 MiB", now);
    return;
  }
  nlohmann::json reply;
  try {
    const ParsedRequest req = parse_request(line);
    if (req.cmd == "watch") {
      uint64_t interval = watch_interval_ns(req.args);
      std::vector<ClientSlot> open;
      for (auto& o : clients_)
        if (!o->closing && !o->dead) open.push_back(o->slot());
      const std::string refusal = watch_refusal(open, c.slot(), ctx_.config.control.limits());
      if (!refusal.empty()) throw RequestError(refusal, "limit");
      if (!c.is_operator) interval = std::max(interval, ctx_.config.control.min_watch_interval_ns);
      c.interval_ns = interval;
      c.watching = true;
      c.next_ns = now;
      c.last_progress_ns = now;
      c.in.clear();  // a watch is the connection's last request
      c.in_off = 0;
      c.lines = 0;
      reply = {{"ok", true}, {"result", {{"watching", true}, {"interval_ns", c.interval_ns}}}};
      if (!req.id.is_null()) reply["id"] = req.id;
    } else {
      reply = handle_request(ctx_, line, c.peer);
    }
  } catch (const RequestError& e) {
    reply = error_reply(e.what(), nullptr, e.code());
  }
  c.out += line_of(reply);
}

// Sends what each client can take and closes what is finished; true if a client was closed.
bool ControlServer::send_and_reap(uint64_t now) {
  bool closed = false;
  for (auto& cp : clients_) {
    Client& c = *cp;
    const bool pending = !c.closing && !c.watching && c.lines != 0;
    // The client closed its side: a watch ends; otherwise send the replies, then close.
    if (c.eof && !pending && !c.closing) {
      if (c.watching) {
        c.dead = true;
      } else {
        c.closing = true;
        c.close_by_ns = now + kCloseGraceNs;
      }
    }
    if (!c.dead && c.pending_out() != 0) {
      const uint64_t t0 = datapath::monotonic_ns();
      const ssize_t n =
          send(c.fd, c.out.data() + c.out_off, c.pending_out(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out_off += static_cast<size_t>(n);
        c.last_progress_ns = now;
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        c.dead = true;
      }
      if (c.pending_out() > kMaxUnsent) {
        spdlog::warn("control client uid {} pid {}: over {} MiB of replies unread; closed",
                     c.peer.uid, c.peer.pid, kMaxUnsent >> 20);
        c.dead = true;
      }
      compact(c.out, c.out_off);
      charge(c, t0);
    }
    if (c.closing && (c.pending_out() == 0 || now >= c.close_by_ns)) c.dead = true;
    free_if_large(c.in);
    free_if_large(c.out);
    if (c.dead) {
      close(c.fd);
      closed = true;
    }
  }
  std::erase_if(clients_, [](const std::unique_ptr<Client>& c) { return c->dead; });
  return closed;
}

}  // namespace sharebuf::mgmt

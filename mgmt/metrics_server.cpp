#include "mgmt/metrics_server.h"

#include <pthread.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <httplib.h>

#include "mgmt/metrics_text.h"

namespace sharebuf::mgmt {

namespace {

// Runs each accepted connection on the listener's own thread: one at a time, and while one is
// served the kernel's backlog holds the next (cpp-httplib's default pool would queue any number).
class InlineQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("must be host:port, e.g. \"127.0.0.1:9464\"");
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    throw std::invalid_argument("an IPv6 address goes in brackets: \"[::1]:9464\"");
  }
  if (host.empty()) host = "127.0.0.1";
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port_text) > 65535)
    throw std::invalid_argument("the port must be a number from 0 to 65535, got '" + port_text +
                                "'");
  return {host, static_cast<uint16_t>(std::stoul(port_text))};
}

struct MetricsServer::Http {
  httplib::Server server;
};

MetricsServer::MetricsServer(const ListenAddress& listen, Scrape scrape)
    : http_(std::make_unique<Http>()), scrape_(std::move(scrape)), host_(listen.host) {
  httplib::Server& s = http_->server;
  s.new_task_queue = [] { return new InlineQueue; };
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, with which a second daemon
  // configured with the same address would share it and answer half the scrapes.
  s.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.set_keep_alive_max_count(1);
  s.set_keep_alive_timeout(2);  // also the wait for a new connection's first byte
  s.set_read_timeout(2, 0);
  s.set_write_timeout(2, 0);
  s.set_payload_max_length(4096);
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(scrape_(), std::string(kOpenMetricsContentType).c_str());
    scrapes_.fetch_add(1, std::memory_order_relaxed);
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content("the snapshot failed\n", "text/plain");
  });
  errno = 0;
  if (listen.port == 0) {
    const int port = s.bind_to_any_port(listen.host);
    if (port > 0) port_ = static_cast<uint16_t>(port);
  } else if (s.bind_to_port(listen.host, listen.port)) {
    port_ = listen.port;
  }
  if (port_ == 0) {
    const int err = errno;
    throw std::runtime_error("cannot listen on " + listen.host + ":" + std::to_string(listen.port) +
                             ": " +
                             (err != 0 ? std::strerror(err) : "not an address of this machine"));
  }
}

MetricsServer::~MetricsServer() {
  // cpp-httplib closes the bound socket only in stop() of a running server.
  if (!started_) start();
  stop();
}

void MetricsServer::start() {
  if (started_) return;  // once: stop() closes the socket for good
  started_ = true;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "sb-metrics");  // ps -L, the benchmark's CPU share
    http_->server.listen_after_bind();
  });
  // stop() does nothing until the listener has begun (cpp-httplib checks is_running()), so a
  // stop right after start would otherwise leave the thread in accept() for good.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!http_->server.is_running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void MetricsServer::stop() {
  if (!thread_.joinable()) return;
  http_->server.stop();
  thread_.join();
}

std::string MetricsServer::address() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

}  // namespace sharebuf::mgmt

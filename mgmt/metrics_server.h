// MetricsServer: sharebufd's [metrics] listener. It answers `GET /metrics` with the OpenMetrics
// text (mgmt/metrics_text.h) of a fresh snapshot, so Prometheus can scrape the switch.
//
// It runs on a thread of its own and reads the datapath only through the snapshot callback
// (SwitchControl::stats_from_other_thread: relaxed loads of the workers' counters), so a scrape
// never takes a lock a forwarding thread waits for. It serves one connection at a time and closes
// it after one answer: a client that connects and sends nothing is dropped after 2 s, further
// connections wait in the kernel's backlog meanwhile, so no client can make it hold more than one
// connection's memory. A client that trickles a request byte by byte holds the listener (never
// the switch or the control socket) longer: hence loopback by default. cpp-httplib (Debian's
// libcpp-httplib-dev) parses HTTP; it stays out of this header.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace sharebuf::mgmt {

// "host:port", "[v6 address]:port" or ":port" (loopback). Port 0 picks a free one (tests).
struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};
// Throws std::invalid_argument with the reason.
ListenAddress parse_listen_address(const std::string& text);

class MetricsServer {
 public:
  using Scrape = std::function<std::string()>;
  // Binds at once; throws std::runtime_error naming the address and the reason if it cannot.
  MetricsServer(const ListenAddress& listen, Scrape scrape);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // start() once; stop() ends the listener for good (also what the destructor does).
  void start();
  void stop();
  // The address bound, as host:port (the port the kernel chose for port 0).
  std::string address() const;
  uint16_t port() const noexcept { return port_; }
  uint64_t scrapes() const noexcept { return scrapes_.load(std::memory_order_relaxed); }

 private:
  struct Http;
  std::unique_ptr<Http> http_;
  Scrape scrape_;
  std::string host_;
  uint16_t port_ = 0;
  std::atomic<uint64_t> scrapes_{0};
  bool started_ = false;
  std::thread thread_;
};

}  // namespace sharebuf::mgmt

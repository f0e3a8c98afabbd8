// The control server over a real unix socket: many clients at once, clients that vanish in the
// middle of a watch, that send a line over 1 MiB, or that never read — none of them may stop
// the others from being served.
#include "mgmt/control_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/mgmt/control_fixture.h"

namespace sharebuf::mgmt {
namespace {

using nlohmann::json;

class Client {
 public:
  explicit Client(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~Client() { close_now(); }
  bool connected() const { return connected_; }
  bool send_raw(const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // The next line within 5 s; nullopt on EOF or timeout.
  std::optional<std::string> line() {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return l;
      }
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 5000) <= 0) return std::nullopt;
      char tmp[65536];
      const ssize_t n = read(fd_, tmp, sizeof(tmp));
      if (n <= 0) return std::nullopt;
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }
  json request(const std::string& req) {
    if (!send_raw(req + "\n")) return nullptr;
    const auto l = line();
    return l ? json::parse(*l, nullptr, false) : json(nullptr);
  }
  void close_now() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string buf_;
};

struct ServerFixture : ::testing::Test {
  testing::ControlFixture f;
  std::string path = (std::filesystem::temp_directory_path() /
                      ("sharebuf-ctl-test-" + std::to_string(getpid()) + ".sock"))
                         .string();
  std::unique_ptr<ControlServer> server;
  void SetUp() override {
    server = std::make_unique<ControlServer>(f.ctx, path);
    server->start();
  }
  void TearDown() override { server.reset(); }
};

TEST_F(ServerFixture, HundredConcurrentClients) {
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 100; ++i) {
    threads.emplace_back([&, i] {
      Client c(path);
      if (!c.connected()) return;
      const json a = c.request(R"({"cmd":"status","id":)" + std::to_string(i) + "}");
      const json b = c.request(R"({"cmd":"queues"})");
      if (a.is_object() && a["ok"] == true && a["id"] == i && b.is_object() && b["ok"] == true)
        ++good;
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(good.load(), 100);
  EXPECT_GE(server->clients_served(), 100u);
}

TEST_F(ServerFixture, SeveralRequestsInOneWriteGetOneReplyEach) {
  Client c(path);
  ASSERT_TRUE(c.send_raw("{\"cmd\":\"version\"}\n\n{\"cmd\":\"status\"}\r\nbad\n"));
  EXPECT_EQ(json::parse(*c.line())["ok"], true);
  EXPECT_EQ(json::parse(*c.line())["ok"], true);
  EXPECT_EQ(json::parse(*c.line())["error"], "malformed JSON");
}

TEST_F(ServerFixture, ClientVanishingMidWatchLeavesTheServerServing) {
  {
    Client w(path);
    const json r = w.request(R"({"cmd":"watch","args":{"interval_us":100}})");
    ASSERT_EQ(r["ok"], true) << r.dump();
    for (int i = 0; i < 5; ++i) {
      const auto s = w.line();
      ASSERT_TRUE(s.has_value());
      EXPECT_TRUE(json::parse(*s).contains("queues"));
    }
  }  // closed in the middle of the stream
  Client c(path);
  EXPECT_EQ(c.request(R"({"cmd":"status"})")["ok"], true);
}

TEST_F(ServerFixture, LineOverOneMebibyteIsRefusedAndClosed) {
  Client c(path);
  c.send_raw(std::string(kMaxRequestBytes + 100, 'x'));
  const auto l = c.line();
  ASSERT_TRUE(l.has_value());
  EXPECT_NE(l->find("longer than 1 MiB"), std::string::npos);
  EXPECT_FALSE(c.line().has_value());  // closed
  Client d(path);
  EXPECT_EQ(d.request(R"({"cmd":"version"})")["ok"], true);
}

TEST_F(ServerFixture, AWatcherThatNeverReadsDoesNotBlockOthers) {
  Client stalled(path);
  stalled.send_raw(R"({"cmd":"watch","args":{"interval_us":100}})"
                   "\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its buffers fill up
  Client c(path);
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(c.request(R"({"cmd":"queues"})")["ok"], true);
}

TEST_F(ServerFixture, SecondServerOnALiveSocketIsRefused) {
  EXPECT_THROW(ControlServer(f.ctx, path), std::runtime_error);
}

TEST_F(ServerFixture, ShutdownCommandCallsTheDaemonsHook) {
  std::atomic<bool> called{false};
  server.reset();
  f.ctx.shutdown = [&] { called = true; };
  server = std::make_unique<ControlServer>(f.ctx, path);
  server->start();
  Client c(path);
  EXPECT_EQ(c.request(R"({"cmd":"shutdown"})")["ok"], true);
  EXPECT_TRUE(called.load());
}

}  // namespace
}  // namespace sharebuf::mgmt

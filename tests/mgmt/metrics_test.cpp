// The [metrics] listener: the OpenMetrics text is the stats JSON's numbers one for one, its
// histograms are exact cumulative sums of the switch's buckets, and the HTTP server answers,
// refuses what it does not serve and is not held by a silent client.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "buffer/delay_histogram.h"
#include "mgmt/config_loader.h"
#include "mgmt/control_commands.h"
#include "mgmt/metrics_server.h"
#include "mgmt/metrics_text.h"
#include "tests/mgmt/control_fixture.h"

namespace sharebuf::mgmt {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The samples of an exposition: "name{labels}" -> value text. Fails the test on a line that is
// neither a sample nor one of the three comment kinds, on a sample outside its family, and on a
// missing or misplaced "# EOF".
std::map<std::string, std::string> samples_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  std::string family;
  std::string type;
  bool eof = false;
  const std::regex sample(R"(^([a-z_]+)(\{[^}]*\})? (\S+)$)");
  while (std::getline(in, line)) {
    EXPECT_FALSE(eof) << "a line after # EOF: " << line;
    if (line == "# EOF") {
      eof = true;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      t >> family >> type;
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, sample)) << line;
    if (m.empty()) continue;
    const std::string name = m[1];
    EXPECT_EQ(name.rfind(family, 0), 0u) << name << " outside its family " << family;
    const std::string suffix = name.substr(family.size());
    const std::map<std::string, std::set<std::string>> suffixes = {
        {"counter", {"_total"}},
        {"gauge", {""}},
        {"info", {"_info"}},
        {"histogram", {"_bucket", "_count"}}};
    EXPECT_TRUE(suffixes.count(type) != 0 && suffixes.at(type).count(suffix) != 0)
        << name << " in a family of type " << type;
    EXPECT_TRUE(out.emplace(name + std::string(m[2]), m[3]).second) << "twice: " << line;
  }
  EXPECT_TRUE(eof) << "no # EOF";
  return out;
}

std::string value(const std::map<std::string, std::string>& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() ? "<absent>" : it->second;
}

TEST(MetricsText, EveryCounterOfTheStatsIsACounterWithTheSameValue) {
  testing::ControlFixture f;
  // Distinct values, so that a metric reading the wrong key cannot agree by chance.
  uint64_t next = 1000;
  for (auto& port : f.core->ports) {
    port->counters.rx_frames.fetch_add(next++);
    port->counters.tx_bytes.fetch_add(next++);
    port->counters.ring_drops.fetch_add(next++);
    port->counters.malformed[1].fetch_add(next++);
  }
  for (uint32_t q = 0; q < f.core->buffer().layout().num_queues(); ++q) {
    auto& s = f.core->buffer().stats(q);
    s.received_pkts.fetch_add(next++);
    s.dropped_pkts[1].fetch_add(next++);
    s.trimmed_pkts.fetch_add(next++);
  }
  const json stats = f.control->stats();
  const auto samples = samples_of(openmetrics_text(stats));
  const std::string sw = R"(switch="ctl-test")";
  size_t checked = 0;
  for (const json& port : stats["ports"]) {
    const std::string pl = sw + ",port=\"" + port["interface"].get<std::string>() + "\"";
    for (const auto& [key, v] : port.items()) {
      if (!is_counter(key) || !v.is_number() || key == "malformed_total") continue;
      EXPECT_EQ(value(samples, "sharebuf_port_" + key + "_total{" + pl + "}"), v.dump()) << key;
      ++checked;
    }
    for (const auto& [reason, v] : port["malformed"].items())
      EXPECT_EQ(
          value(samples, "sharebuf_port_malformed_total{" + pl + ",reason=\"" + reason + "\"}"),
          v.dump());
    for (const auto& [key, v] : port["tofino_approx"].items()) {
      if (!is_counter(key)) continue;
      EXPECT_EQ(value(samples, "sharebuf_trim_" + key + "_total{" + pl + "}"), v.dump()) << key;
      ++checked;
    }
    for (const json& q : port["queues"]) {
      const std::string ql = pl + ",queue=\"" + q["queue"].dump() + "\"";
      for (const auto& [key, v] : q.items()) {
        if (!is_counter(key) || !v.is_number()) continue;
        EXPECT_EQ(value(samples, "sharebuf_queue_" + key + "_total{" + ql + "}"), v.dump()) << key;
        ++checked;
      }
      for (const auto& [reason, v] : q["dropped"].items())
        EXPECT_EQ(
            value(samples, "sharebuf_queue_dropped_total{" + ql + ",reason=\"" + reason + "\"}"),
            v.dump());
      EXPECT_EQ(value(samples, "sharebuf_queue_threshold_cells{" + ql + "}"),
                q["threshold_cells"].dump());
      EXPECT_EQ(value(samples, "sharebuf_queue_occupancy_cells{" + ql + "}"),
                q["occupancy_cells"].dump());
    }
  }
  EXPECT_GT(checked, 40u);
  EXPECT_EQ(value(samples, "sharebuf_policy_info{" + sw + ",policy=\"dt\"}"), "1");
  EXPECT_EQ(value(samples, "sharebuf_policy_param{" + sw + ",policy=\"dt\",param=\"alpha\"}"), "1");
  EXPECT_EQ(value(samples, "sharebuf_buffer_capacity_cells{" + sw + "}"), "4000");
}

// Every `le` bucket counts exactly the delays at or below it, and +Inf and _count all of them.
TEST(MetricsText, HistogramBucketsAreExactCumulativeCounts) {
  buffer::DelayHistogram h;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> delays;
  for (int i = 0; i < 5000; ++i) {
    // Log-uniform from 1 ns to about 34 s, and every power of two and its neighbours.
    const uint64_t d = uint64_t{1} << (rng() % 35);
    delays.push_back(d + rng() % d);
  }
  for (int k = 0; k < 36; ++k)
    for (const int64_t off : {-1, 0, 1})
      delays.push_back(static_cast<uint64_t>(static_cast<int64_t>(uint64_t{1} << k) + off));
  for (const uint64_t d : delays)
    h.record(d);
  json buckets = json::array();
  for (int b = 0; b < buffer::DelayHistogram::kBuckets; ++b)
    if (const uint64_t n = h.count_in(b))
      buckets.push_back({buffer::DelayHistogram::lower_bound(b), n});
  const json stats = {
      {"switch", "s"},
      {"ports",
       {{{"interface", "p1"}, {"queues", {{{"queue", 0}, {"delay_histogram", buckets}}}}}}}};
  const std::string text = openmetrics_text(stats);
  const std::regex bucket(
      R"re(sharebuf_queue_delay_seconds_bucket\{switch="s",port="p1",queue="0",le="([^"]+)"\} (\d+))re");
  size_t seen = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), bucket);
       it != std::sregex_iterator(); ++it) {
    const std::string le = (*it)[1];
    const uint64_t count = std::stoull((*it)[2]);
    uint64_t expect = 0;
    if (le == "+Inf") {
      expect = delays.size();
    } else {
      const auto limit_ns = static_cast<uint64_t>(std::llround(std::stod(le) * 1e9));
      for (const uint64_t d : delays)
        if (d <= limit_ns) ++expect;
    }
    EXPECT_EQ(count, expect) << "le=" << le;
    ++seen;
  }
  EXPECT_EQ(seen, 28u);
  EXPECT_THAT(text, HasSubstr("sharebuf_queue_delay_seconds_count{switch=\"s\",port=\"p1\","
                              "queue=\"0\"} " +
                              std::to_string(delays.size())));
  samples_of(text);
}

// docs/metrics.md's table lists exactly the families a switch exports (with the counters only a
// port with a kernel interface has, and every trimming counter).
TEST(MetricsText, TheDocsListEveryFamilyAndNoOther) {
  testing::ControlFixture f;
  json stats = f.control->stats();
  stats["ports"][0]["interface_rx_frames"] = 1;
  stats["ports"][0]["before_socket"] = 0;
  stats["daemon"] = {{"log_lines_lost", 0}};
  std::set<std::string> exported;
  std::istringstream in(openmetrics_text(stats));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# TYPE ", 0) == 0) exported.insert(line.substr(7, line.find(' ', 7) - 7));
  std::ifstream doc(std::string(SHAREBUF_SOURCE_DIR) + "/docs/metrics.md");
  ASSERT_TRUE(doc) << "docs/metrics.md";
  std::set<std::string> documented;
  const std::regex row(R"(^\| `(sharebuf_[a-z_]+)` \|)");
  for (std::string line; std::getline(doc, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) documented.insert(m[1]);
  }
  EXPECT_EQ(documented, exported);
}

TEST(MetricsText, LabelValuesAreEscaped) {
  const json stats = {{"switch", "a\"b\\c\nd"}, {"buffer", {{"capacity_cells", 7}}}};
  EXPECT_THAT(openmetrics_text(stats),
              HasSubstr(R"(sharebuf_buffer_capacity_cells{switch="a\"b\\c\nd"} 7)"));
}

TEST(MetricsServer, ListenAddresses) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:9464").host, "127.0.0.1");
  EXPECT_EQ(parse_listen_address("127.0.0.1:9464").port, 9464);
  EXPECT_EQ(parse_listen_address("[::1]:80").host, "::1");
  EXPECT_EQ(parse_listen_address(":0").host, "127.0.0.1");
  for (const char* bad : {"9464", "127.0.0.1:", "127.0.0.1:65536", "::1:80", "h:8x"})
    EXPECT_THROW(parse_listen_address(bad), std::invalid_argument) << bad;
}

// One HTTP exchange on a fresh connection: the whole answer, or "" if none within 10 s.
std::string http_exchange(uint16_t port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
      out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

TEST(MetricsServer, AnswersMetricsOnlyAndAlwaysAFreshSnapshot) {
  int n = 0;
  MetricsServer server(parse_listen_address("127.0.0.1:0"),
                       [&n] { return "snapshot " + std::to_string(++n) + "\n# EOF\n"; });
  server.start();
  ASSERT_NE(server.port(), 0);
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string first = http_exchange(server.port(), get);
  EXPECT_THAT(first, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(first, HasSubstr("Content-Type: application/openmetrics-text; version=1.0.0"));
  EXPECT_THAT(first, HasSubstr("snapshot 1\n# EOF\n"));
  EXPECT_THAT(http_exchange(server.port(), get), HasSubstr("snapshot 2\n"));
  EXPECT_THAT(http_exchange(server.port(), "GET /other HTTP/1.1\r\nHost: x\r\n\r\n"),
              HasSubstr("HTTP/1.1 404"));
  EXPECT_THAT(http_exchange(server.port(),
                            "POST /metrics HTTP/1.1\r\nHost: x\r\n"
                            "Content-Length: 0\r\n\r\n"),
              ::testing::Not(HasSubstr("HTTP/1.1 200")));
  EXPECT_EQ(server.scrapes(), 2u);
  server.stop();
}

// A client that connects and says nothing is dropped after the read timeout; the next scraper is
// answered then, not never.
TEST(MetricsServer, ASilentClientDoesNotHoldTheListener) {
  MetricsServer server(parse_listen_address("127.0.0.1:0"), [] { return std::string("x\n"); });
  server.start();
  const int silent = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(server.port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(silent, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_THAT(http_exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
              HasSubstr("HTTP/1.1 200"));
  close(silent);
}

TEST(MetricsServer, AnAddressInUseIsAClearError) {
  MetricsServer first(parse_listen_address("127.0.0.1:0"), [] { return std::string(); });
  EXPECT_THAT(
      [&] {
        MetricsServer second({"127.0.0.1", first.port()}, [] { return std::string(); });
      },
      ::testing::ThrowsMessage<std::runtime_error>(
          HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(first.port()))));
}

TEST(MetricsServer, StopsRightAfterStart) {
  for (int i = 0; i < 20; ++i) {
    MetricsServer s(parse_listen_address("127.0.0.1:0"), [] { return std::string(); });
    s.start();
    s.stop();
  }
}

TEST(MetricsConfig, OffUnlessConfiguredLoopbackByDefault) {
  const std::string base =
      "[buffer]\nsize = \"4000 cells\"\n[[classes]]\nname = \"a\"\n[[ports]]\ninterface = \"p1\"\n";
  EXPECT_EQ(parse_config(base, "m.toml").metrics_listen, "");
  EXPECT_EQ(parse_config(base + "[metrics]\n", "m.toml").metrics_listen, "127.0.0.1:9464");
  EXPECT_EQ(parse_config(base + "[metrics]\nlisten = \"[::1]:9100\"\n", "m.toml").metrics_listen,
            "[::1]:9100");
  EXPECT_THAT([&] { parse_config(base + "[metrics]\nlisten = \"9100\"\n", "m.toml"); },
              ::testing::ThrowsMessage<ConfigError>(
                  ::testing::AllOf(HasSubstr("m.toml:8:"), HasSubstr("[metrics] key 'listen'"))));
  EXPECT_THAT([&] { parse_config(base + "[metrics]\nlisen = \"x:1\"\n", "m.toml"); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("lisen")));
}

}  // namespace
}  // namespace sharebuf::mgmt

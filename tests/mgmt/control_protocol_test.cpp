// The control protocol, request by request: every command and every kind of bad input, as a table
// of request -> expected reply; then the effects that need more than one request.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <set>

#include "buffer/accounting_check.h"
#include "mgmt/control_commands.h"
#include "tests/mgmt/control_fixture.h"

namespace sharebuf::mgmt {
namespace {

using nlohmann::json;

struct Case {
  const char* request;
  bool ok;
  const char* expect;  // ok: a JSON pointer that must exist in "result"; else: error substring
};

// clang-format off
const Case kCases[] = {
    {R"({"cmd":"list-commands"})", true, "/0/name"},
    {R"({"cmd":"version"})", true, "/version"},
    {R"({"cmd":"status"})", true, "/capacity_cells"},
    {R"({"cmd":"status","id":7})", true, "/policy"},
    {R"({"cmd":"ports"})", true, "/1/rx_frames"},
    {R"({"cmd":"latency"})", true, "/1/hops/wakeup/p99_ns"},
    {R"({"cmd":"latency"})", true, "/0/hops/rx_to_sent/histogram"},
    {R"({"cmd":"latency","args":{"port":1}})", false, "unknown argument"},
    {R"({"cmd":"queues"})", true, "/0/delay_p99_ns"},
    {R"({"cmd":"queues"})", true, "/0/delay_histogram"},
    {R"({"cmd":"queues"})", true, "/1/dropped/pushed_out"},
    {R"({"cmd":"queues"})", true, "/1/trimmed_dropped"},
    {R"({"cmd":"queues"})", true, "/0/bounced"},
    {R"({"cmd":"config"})", true, "/toml"},
    {R"({"cmd":"policy.get"})", true, "/state/thresholds_cells"},
    {R"({"cmd":"policy.list"})", true, "/10/params"},
    {R"({"cmd":"policy.list"})", true, "/2/params/0/range"},
    {R"({"cmd":"policy.set","args":{"name":"fb","params":{"alpha_low":0.6}}})", true, "/params/alpha_low"},
    {R"({"cmd":"policy.set","args":{"params":{"alpha":2}}})", true, "/previous"},
    {R"({"cmd":"view.set","args":{"mode":"probe","probe_interval_us":20}})", true, "/probe_interval_ns"},
    {R"({"cmd":"view.set","args":{"mode":"exact"}})", true, "/view"},
    {R"({"cmd":"view.set","args":{"probe_delay_us":2}})", true, "/probe_delay_ns"},
    {R"({"cmd":"policy.get"})", true, "/view/probe_delay_ns"},
    {R"({"cmd":"status"})", true, "/probe_delay_ns"},
    {R"({"cmd":"counters.reset"})", true, "/reset"},
    // Bad input: each gets an error reply that says what was wrong.
    {R"(not json)", false, "malformed JSON"},
    {R"({"cmd":"status")", false, "malformed JSON"},
    {R"([1,2])", false, "JSON object"},
    {R"({"args":{}})", false, "missing \"cmd\""},
    {R"({"cmd":42})", false, "\"cmd\" must be a string"},
    {R"({"cmd":"status","args":[]})", false, "\"args\" must be an object"},
    {R"({"cmd":"status","extra":1})", false, "unknown request field 'extra'"},
    {R"({"cmd":"reboot"})", false, "unknown command 'reboot'"},
    {R"({"cmd":"status","args":{"x":1}})", false, "unknown argument 'x'"},
    {R"({"cmd":"policy.set","args":{"name":"nope"}})", false, "unknown policy 'nope'"},
    {R"({"cmd":"policy.set","args":{"name":"dt","params":{"alpha":"big"}}})", false, "'alpha'"},
    {R"({"cmd":"policy.set","args":{"name":"dt","params":{"alhpa":1}}})", false, "policy.set: policy 'dt': key 'alhpa': unknown key"},
    {R"({"cmd":"policy.set","args":{"name":7}})", false, "'name' must be a string"},
    {R"({"cmd":"policy.set","args":{"params":[1]}})", false, "'params' must be an object"},
    {R"({"cmd":"view.set","args":{"mode":"fuzzy"}})", false, "one of exact, probe"},
    {R"({"cmd":"view.set","args":{"probe_interval_us":"fast"}})", false, "probe_interval_us"},
    {R"({"cmd":"view.set","args":{"probe_interval_us":0.5}})", false, "1 us – 1 s"},
    {R"({"cmd":"view.set","args":{"probe_interval_us":1,"probe_delay_us":300}})", false,
     "at most 254 probe intervals"},
    {R"({"cmd":"watch","args":{"interval_us":50}})", false, "from 100"},
    {R"({"cmd":"capture.start"})", false, "missing argument 'path'"},
    {R"({"cmd":"capture.start","args":{"path":"/tmp/x.pcap","mode":"some"}})", false, "\"drops\" or \"all\""},
    {R"({"cmd":"capture.start","args":{"path":"/nonexistent/dir/x.pcap"}})", false, "written only below"},
    {R"({"cmd":"capture.start","args":{"path":"/proc/self/mem"}})", false, "written only below"},
    {R"({"cmd":"capture.start","args":{"path":"../../etc/x.pcap"}})", false, "written only below"},
    {R"({"cmd":"capture.start","args":{"path":"x.pcap","overwrite":"yes"}})", false, "'overwrite' must be true or false"},
    {R"({"cmd":"capture.start","args":{"path":"x.pcap","mode":"all","stamps":"tsc"}})", false, "\"admission\" or \"ring\""},
    {R"({"cmd":"capture.start","args":{"path":"x.pcap","stamps":"ring"}})", false, "needs mode \"all\""},
    {R"({"cmd":"capture.stop"})", false, "no capture is running"},
    {R"({"cmd":"capture.start","args":{"path":"a/b/x.pcap"}})", false, "one directory below"},
    {R"({"cmd":"trim.set","args":{"trim_dscp":18446744073709551615}})", false, "between -1 and 63"},
    {R"({"cmd":"trim.set","args":{"return_dscp":9223372036854775808}})", false, "between -1 and 63"},
    {R"({"cmd":"trim.set","args":{"trim_dscp_toward":18446744073709551615}})", false, "between -1 and 63"},
    {R"({"cmd":"trim.set","args":{"recirc_rate":"20000000000Gbit"}})", false, "out of range"},
};
// clang-format on

class ControlProtocol : public ::testing::TestWithParam<Case> {};

TEST_P(ControlProtocol, RequestGetsTheExpectedReply) {
  testing::ControlFixture f;
  const Case& c = GetParam();
  const json reply = handle_request(f.ctx, c.request);
  ASSERT_EQ(reply["ok"], c.ok) << reply.dump();
  if (c.ok) {
    EXPECT_TRUE(reply["result"].contains(json::json_pointer(c.expect))) << reply.dump();
  } else {
    EXPECT_NE(reply["error"].get<std::string>().find(c.expect), std::string::npos)
        << reply["error"];
  }
}

INSTANTIATE_TEST_SUITE_P(Table, ControlProtocol, ::testing::ValuesIn(kCases));

TEST(ControlProtocolEffects, IdIsEchoed) {
  testing::ControlFixture f;
  EXPECT_EQ(handle_request(f.ctx, R"({"cmd":"version","id":"abc"})")["id"], "abc");
  EXPECT_EQ(handle_request(f.ctx, R"({"cmd":"nope","id":3})")["id"], 3);
}

// Every error reply carries a code beside its message: the request's own faults, and the
// datapath's ControlError codes as SwitchControl returned them.
TEST(ControlProtocolEffects, ErrorRepliesCarryACode) {
  testing::ControlFixture f;
  const auto code = [&](const char* line) { return handle_request(f.ctx, line)["code"]; };
  EXPECT_EQ(code(R"(not json)"), "bad_request");
  EXPECT_EQ(code(R"({"cmd":"nope"})"), "bad_request");
  EXPECT_EQ(code(R"({"cmd":"status","args":{"x":1}})"), "bad_request");
  EXPECT_EQ(code(R"({"cmd":"policy.set","args":{"name":"dt","params":{"alpha":-1}}})"),
            "invalid_argument");
  EXPECT_EQ(code(R"({"cmd":"view.set","args":{"probe_interval_us":1,"probe_delay_us":1000}})"),
            "invalid_argument");
  EXPECT_EQ(code(R"({"cmd":"capture.stop"})"), "not_found");
  ASSERT_TRUE(
      handle_request(f.ctx, R"({"cmd":"capture.start","args":{"path":"codes.pcap"}})")["ok"]);
  EXPECT_EQ(code(R"({"cmd":"capture.start","args":{"path":"codes2.pcap"}})"), "conflict");
  EXPECT_TRUE(handle_request(f.ctx, R"({"cmd":"capture.stop"})")["ok"]);
  EXPECT_FALSE(handle_request(f.ctx, R"({"cmd":"status"})").contains("code"));
}

// trim.set changes what the RX workers read (TrimSettings) and the effective configuration, which
// loads back to the same settings; a bad field changes nothing.
TEST(ControlProtocolEffects, TrimSetChangesTheWorkersSettingsAndTheConfig) {
  testing::ControlFixture f;
  const json ok = handle_request(f.ctx, R"({"cmd":"trim.set","args":{"trim_size":256,
      "trim_dscp":8,"return_dscp":7,"class":"low","overflow":"return-to-sender",
      "return_threshold":50,"port":"pb","trim_queue":0,"trim_dscp_toward":12}})");
  ASSERT_TRUE(ok["ok"]) << ok.dump();
  EXPECT_EQ(ok["result"]["classes"][0]["overflow"], "return-to-sender");
  const model::TrimSettings& t = f.core->switch_model.trim();
  EXPECT_EQ(t.size.load(), 256u);
  EXPECT_EQ(t.dscp.load(), 8);
  EXPECT_EQ(t.return_dscp.load(), 7);
  EXPECT_EQ(t.overflow_of(0), model::OverflowAction::kReturnToSender);
  EXPECT_EQ(t.return_threshold[0].load(), 50u);
  EXPECT_EQ(t.dscp_toward[1].load(), 12);
  const DaemonConfig back = parse_config(effective_config_toml(f.ctx), "back.toml");
  EXPECT_EQ(back.sw.trim.size, 256u);
  EXPECT_EQ(back.sw.trim.return_dscp, 7);
  EXPECT_EQ(back.sw.classes[0].overflow, model::OverflowAction::kReturnToSender);
  EXPECT_EQ(back.sw.classes[0].return_threshold_cells, 50u);
  EXPECT_EQ(back.sw.ports[1].trim_dscp_toward, 12);
  const auto code = [&](const char* line) { return handle_request(f.ctx, line)["code"]; };
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"class":"nope","overflow":"trim"}})"), "not_found");
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"overflow":"trim"}})"), "invalid_argument");
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"port":"pa","trim_queue":1,"trim_size":100}})"),
            "invalid_argument");  // pa has one queue
  EXPECT_EQ(t.size.load(), 256u) << "a refused update changes nothing";
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"trim_size":32}})"), "invalid_argument");
  EXPECT_EQ(handle_request(f.ctx, R"({"cmd":"trim.get"})")["result"]["trim_size"], 256);
}

// trim.set and policy.set have one semantics, a patch: the keys given change, the others keep
// their values (policy.set: the running policy's; another policy starts from its defaults). A
// start-only key is refused saying so; a class's return threshold may be a size, as in the file.
TEST(ControlProtocolEffects, TrimSetAndPolicySetArePatches) {
  testing::ControlFixture f;
  const auto req = [&](const char* line) { return handle_request(f.ctx, line); };
  ASSERT_TRUE(req(R"({"cmd":"trim.set","args":{"trim_size":200}})")["ok"]);
  ASSERT_TRUE(req(R"({"cmd":"trim.set","args":{"trim_dscp":5}})")["ok"]);
  EXPECT_EQ(f.core->switch_model.trim().size.load(), 200u);
  EXPECT_EQ(f.core->switch_model.trim().dscp.load(), 5);
  const json seed = req(R"({"cmd":"trim.set","args":{"seed":3}})");
  EXPECT_FALSE(seed["ok"]);
  EXPECT_NE(seed["error"].get<std::string>().find("at start only"), std::string::npos) << seed;
  ASSERT_TRUE(req(R"({"cmd":"trim.set","args":{"class":"low","overflow":"return-to-sender",
      "return_threshold":"800B"}})")["ok"]);
  EXPECT_EQ(f.core->switch_model.trim().return_threshold[0].load(), 10u);  // 800 B of 80-byte cells

  ASSERT_TRUE(req(R"({"cmd":"policy.set","args":{"name":"edt","params":{"alpha":2,
      "near_empty_cells":3}}})")["ok"]);
  const json patched = req(R"({"cmd":"policy.set","args":{"params":{"alpha":4}}})");
  ASSERT_TRUE(patched["ok"]) << patched;
  EXPECT_EQ(patched["result"]["params"]["alpha"], 4.0);
  EXPECT_EQ(patched["result"]["params"]["near_empty_cells"], 3) << "kept, not back to its default";
  const json other = req(R"({"cmd":"policy.set","args":{"name":"dt"}})");
  ASSERT_TRUE(other["ok"]) << other;
  EXPECT_EQ(other["result"]["params"]["alpha"], 1.0) << "another policy starts from its defaults";
}

// The Tofino approximation's settings go live and into the effective configuration; the mode
// needs a line rate for every port (pb has none here).
TEST(ControlProtocolEffects, TrimSetTofinoApproxSettings) {
  testing::ControlFixture f;
  const auto code = [&](const char* line) { return handle_request(f.ctx, line)["code"]; };
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"mode":"tofino-approx"}})"), "conflict");
  EXPECT_FALSE(f.core->switch_model.trim().tofino_approx.load());
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"mode":"approx"}})"), "invalid_argument");
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"t0":"six"}})"), "invalid_argument");
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"t0":"2s"}})"), "invalid_argument");
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"pessimistic_share":5}})"), "invalid_argument");
  // Unset, the pessimistic share is the paper's 25 %, whatever the pipelines.
  EXPECT_DOUBLE_EQ(f.core->switch_model.tofino().settings.pessimistic_share.load(), 0.25);
  const json ok = handle_request(f.ctx, R"({"cmd":"trim.set","args":{"meters":"two",
      "meter_burst":9000,"t0":"3us","t1":"18us","recirc_rate":"10Gbit","recirc_queue":30000,
      "recirc_latency":"2us","trim_newest":0.25,"pessimistic_share":0.3}})");
  ASSERT_TRUE(ok["ok"]) << ok.dump();
  EXPECT_EQ(ok["result"]["meters"], "two");
  EXPECT_EQ(ok["result"]["mode"], "ideal");
  const model::TofinoApprox::Settings& s = f.core->switch_model.tofino().settings;
  EXPECT_EQ(s.variant.load(), static_cast<uint8_t>(model::MeterVariant::kTwoMeters));
  EXPECT_EQ(s.burst_bytes.load(), 9000u);
  EXPECT_EQ(s.t0_ns.load(), 3'000u);
  EXPECT_EQ(s.t1_ns.load(), 18'000u);
  EXPECT_DOUBLE_EQ(s.pessimistic_share.load(), 0.3);
  EXPECT_EQ(s.recirc_rate_bps.load(), 10'000'000'000u);
  EXPECT_EQ(s.recirc_queue_bytes.load(), 30'000u);
  EXPECT_EQ(s.recirc_latency_ns.load(), 2'000u);
  EXPECT_EQ(f.core->switch_model.trim().trim_newest_p16.load(), 16384u);
  EXPECT_EQ(ok["result"]["trim_newest"], 0.25);
  EXPECT_EQ(code(R"({"cmd":"trim.set","args":{"trim_newest":1.5}})"), "invalid_argument");
  const DaemonConfig back = parse_config(effective_config_toml(f.ctx), "back.toml");
  EXPECT_EQ(back.sw.trim.meters, model::MeterVariant::kTwoMeters);
  EXPECT_EQ(back.sw.trim.t0_ns, 3'000u);
  EXPECT_EQ(back.sw.trim.t1_ns, 18'000u);
  EXPECT_DOUBLE_EQ(back.sw.trim.pessimistic_share, 0.3);
  EXPECT_EQ(back.sw.trim.recirc_rate_bps, 10'000'000'000u);
  EXPECT_EQ(back.sw.trim.recirc_queue_bytes, 30'000u);
  EXPECT_EQ(back.sw.trim.recirc_latency_ns, 2'000u);
  EXPECT_DOUBLE_EQ(back.sw.trim.trim_newest, 0.25);
  EXPECT_FALSE(back.sw.trim.tofino_approx);
}

TEST(ControlProtocolEffects, PolicySetSwapsLiveAndABadOneChangesNothing) {
  testing::ControlFixture f;
  ASSERT_TRUE(f.core->buffer().state().try_reserve(0, 100));
  const json ok = handle_request(f.ctx, R"({"cmd":"policy.set","args":{"name":"credence"}})");
  ASSERT_TRUE(ok["ok"]) << ok.dump();
  EXPECT_EQ(f.core->policy().name(), "credence");
  // Installed on the current occupancy: queue 0's threshold starts at its 100 cells.
  EXPECT_EQ(f.core->policy().threshold_cells(0, 0, f.core->buffer().exact_view()), 100u);
  const json bad = handle_request(
      f.ctx, R"({"cmd":"policy.set","args":{"name":"lqd","params":{"push_out":"middle"}}})");
  EXPECT_FALSE(bad["ok"]);
  EXPECT_EQ(f.core->policy().name(), "credence");
  // No worker runs here, so the replaced policy is freed at once; the bad request retired none.
  EXPECT_EQ(f.core->retired_pending(), 0u);
  EXPECT_EQ(f.core->reclaimed(), 1u);
  f.core->buffer().state().release(0, 100);
}

TEST(ControlProtocolEffects, ConfigRoundTripsThroughTheLoader) {
  testing::ControlFixture f;
  handle_request(f.ctx,
                 R"({"cmd":"policy.set","args":{"name":"protean","params":{"alpha_incast":0.8}}})");
  handle_request(
      f.ctx,
      R"({"cmd":"view.set","args":{"mode":"probe","probe_interval_us":25,"probe_delay_us":4}})");
  const std::string toml = handle_request(f.ctx, R"({"cmd":"config"})")["result"]["toml"];
  const DaemonConfig back = parse_config(toml, "effective.toml");
  EXPECT_EQ(back.sw.policy, "protean");
  EXPECT_EQ(back.sw.policy_params.values["alpha_incast"], 0.8);
  EXPECT_EQ(back.sw.buffer.view_mode, buffer::ViewMode::kProbe);
  EXPECT_EQ(back.sw.buffer.probe_interval_ns, 25'000u);
  EXPECT_EQ(back.sw.buffer.probe_delay_ns, 4'000u);
  EXPECT_EQ(f.core->buffer().probes().delay_ns(), 4'000u);
  EXPECT_EQ(back.sw.ports.size(), 2u);
  EXPECT_EQ(back.sw.ports[0].rate_bps, 1'000'000'000u);
  // And it is a fixed point: loading and printing again gives the same text.
  ControlContext again(*f.control, back, back.source_text);
  EXPECT_EQ(effective_config_toml(again), toml);
}

TEST(ControlProtocolEffects, CountersResetKeepsTheIdentitiesSinceTheReset) {
  testing::ControlFixture f;
  auto& stats = f.core->buffer().stats(0);
  stats.received_pkts = 10;
  stats.enqueued_pkts = 8;
  stats.dropped_pkts[static_cast<size_t>(buffer::DropReason::kThreshold)] = 2;
  stats.dequeued_pkts = 5;
  stats.deflected_pkts = 6;
  stats.trimmed_newest_pkts = 7;
  stats.stalled_pkts = 1;
  auto& tofino = f.core->switch_model.tofino().counters(0);
  tofino.notifications = 20;
  tofino.to_half = 2;
  handle_request(f.ctx, R"({"cmd":"counters.reset"})");
  stats.received_pkts = 14;
  stats.enqueued_pkts = 11;
  stats.dropped_pkts[static_cast<size_t>(buffer::DropReason::kThreshold)] = 3;
  stats.dequeued_pkts = 9;
  stats.deflected_pkts = 8;
  stats.trimmed_newest_pkts = 7;
  stats.stalled_pkts = 4;
  tofino.notifications = 25;
  tofino.to_half = 3;
  const json q = handle_request(f.ctx, R"({"cmd":"queues"})")["result"][0];
  EXPECT_EQ(q["received"], 4);
  EXPECT_EQ(q["admitted"], 3);
  EXPECT_EQ(q["dropped"]["threshold"], 1);
  EXPECT_EQ(q["transmitted"], 4);
  EXPECT_EQ(q["received"].get<int>(),
            q["admitted"].get<int>() + q["dropped"]["threshold"].get<int>());
  EXPECT_TRUE(q.contains("queued_at_reset"));
  // Every counter counts from the reset, the trimming ones and the emulation's stalls too.
  EXPECT_EQ(q["deflected"], 2);
  EXPECT_EQ(q["trimmed_newest"], 0);
  EXPECT_EQ(q["pool_full_stalled"], 3);
  const json port = handle_request(f.ctx, R"({"cmd":"ports"})")["result"][0];
  EXPECT_EQ(port["tofino_approx"]["notifications"], 5);
  EXPECT_EQ(port["tofino_approx"]["to_half"], 1);
  stats.reset();
  tofino.notifications = 0;
  tofino.to_half = 0;
}

// Every number stats() reports per port, queue and tofino_approx is a counter that counts from
// counters.reset or one of these gauges: a counter added to stats() but not to the counter list
// would go on counting from the daemon's start (the queues' deflected and trimmed_newest and the
// tofino_approx counters once did).
TEST(ControlProtocolEffects, CountersResetKnowsEveryNumberStatsReports) {
  testing::ControlFixture f;
  const std::set<std::string> gauges = {// per queue
                                        "queue", "id", "queued", "delay_p50_ns", "delay_p99_ns",
                                        "occupancy_cells", "peak_cells", "threshold_cells",
                                        // per port
                                        "port", "rate_bps", "mtu", "header_free_cells",
                                        // per port, tofino_approx
                                        "line_rate_bps", "deflect_queue_peak"};
  std::vector<std::string> unknown;
  const auto check = [&](const json& object) {
    for (const auto& [key, value] : object.items()) {
      if (value.is_number() && !is_counter(key) && gauges.count(key) == 0) unknown.push_back(key);
    }
  };
  const json stats = f.control->stats();
  ASSERT_FALSE(stats["ports"].empty());
  for (const json& port : stats["ports"]) {
    check(port);
    check(port["tofino_approx"]);
    ASSERT_FALSE(port["queues"].empty());
    for (const json& queue : port["queues"])
      check(queue);
  }
  EXPECT_TRUE(unknown.empty()) << "neither counter nor gauge: " << json(unknown).dump();
}

TEST(ControlProtocolEffects, CaptureStartsOnceAndStops) {
  testing::ControlFixture f;
  const std::string name = "capture-test-" + std::to_string(getpid()) + ".pcap";
  const std::string path = testing::capture_dir() + "/" + name;
  const json start = handle_request(
      f.ctx, R"({"cmd":"capture.start","args":{"path":")" + name + R"(","mode":"all"}})");
  ASSERT_TRUE(start["ok"]) << start.dump();
  EXPECT_EQ(start["result"]["path"], path);
  EXPECT_EQ(start["result"]["stamps"], "admission");
  EXPECT_NE(f.core->capture.load(), nullptr);
  EXPECT_FALSE(f.core->capture.load()->ring_stamps());
  EXPECT_FALSE(handle_request(f.ctx, R"({"cmd":"capture.start","args":{"path":"y"}})")["ok"]);
  const uint8_t frame[60] = {};
  f.core->capture.load()->offer(frame);
  const json stop = handle_request(f.ctx, R"({"cmd":"capture.stop"})");
  ASSERT_TRUE(stop["ok"]) << stop.dump();
  EXPECT_EQ(stop["result"]["frames"], 1);
  EXPECT_EQ(f.core->capture.load(), nullptr);
  EXPECT_EQ(std::filesystem::file_size(path), 24u + 16 + 60);  // pcap header + one record
  // An existing file is not replaced unless asked, and then only a regular one.
  EXPECT_FALSE(
      handle_request(f.ctx, R"({"cmd":"capture.start","args":{"path":")" + name + R"("}})")["ok"]);
  const json again = handle_request(
      f.ctx, R"({"cmd":"capture.start","args":{"path":")" + name + R"(","overwrite":true}})");
  ASSERT_TRUE(again["ok"]) << again.dump();
  ASSERT_TRUE(handle_request(f.ctx, R"({"cmd":"capture.stop"})")["ok"]);
  EXPECT_EQ(std::filesystem::file_size(path), 24u);
  std::filesystem::remove(path);
}

// Captures never leave the capture directory, never follow a symbolic link out of it, and never
// write to a special file, even with overwrite.
TEST(ControlProtocolEffects, RingStampsAreAskedFor) {
  testing::ControlFixture f;
  const std::string name = "capture-ring-" + std::to_string(getpid()) + ".pcap";
  const json start = handle_request(f.ctx, R"({"cmd":"capture.start","args":{"path":")" + name +
                                               R"(","mode":"all","stamps":"ring"}})");
  ASSERT_TRUE(start["ok"]) << start.dump();
  EXPECT_EQ(start["result"]["stamps"], "ring");
  EXPECT_TRUE(f.core->capture.load()->ring_stamps());
  ASSERT_TRUE(handle_request(f.ctx, R"({"cmd":"capture.stop"})")["ok"]);
  std::filesystem::remove(testing::capture_dir() + "/" + name);
}

TEST(ControlProtocolEffects, CapturesStayInTheCaptureDirectoryAndInRegularFiles) {
  testing::ControlFixture f;
  const std::string dir = testing::capture_dir();
  std::filesystem::create_directories(dir);
  const std::string fifo = dir + "/fifo-" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = dir + "/link-" + std::to_string(getpid());
  std::filesystem::create_symlink("/etc", link);
  const std::string file_link = dir + "/flink-" + std::to_string(getpid());
  std::filesystem::create_symlink("/etc/hostname", file_link);
  auto start = [&](const std::string& args) {
    return handle_request(f.ctx, R"({"cmd":"capture.start","args":)" + args + "}");
  };
  const auto t0 = std::chrono::steady_clock::now();
  json r = start(R"({"path":")" + fifo + R"(","overwrite":true})");
  EXPECT_FALSE(r["ok"]);
  EXPECT_THAT(r["error"].get<std::string>(), ::testing::HasSubstr("not a regular file"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  r = start(R"({"path":")" + link + R"(/x.pcap"})");
  EXPECT_FALSE(r["ok"]);
  EXPECT_THAT(r["error"].get<std::string>(), ::testing::HasSubstr("written only below"));
  r = start(R"({"path":")" + file_link + R"(","overwrite":true})");
  EXPECT_FALSE(r["ok"]);
  EXPECT_THAT(r["error"].get<std::string>(), ::testing::HasSubstr("symbolic link"));
  EXPECT_EQ(f.core->capture.load(), nullptr);
  // One directory below is made when needed; a deeper tree is not.
  r = start(R"({"path":"run-)" + std::to_string(getpid()) + R"(/x.pcap"})");
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_TRUE(handle_request(f.ctx, R"({"cmd":"capture.stop"})")["ok"]);
  r = start(R"({"path":"a/b/c/x.pcap"})");
  EXPECT_FALSE(r["ok"]);
  EXPECT_FALSE(std::filesystem::exists(dir + "/a"));
  std::filesystem::remove(fifo);
  std::filesystem::remove(link);
  std::filesystem::remove(file_link);
}

// A capture that could not write everything (here: past the file size limit) is never reported
// as a success.
TEST(ControlProtocolEffects, ACaptureThatFailedToWriteIsNotASuccess) {
  testing::ControlFixture f;
  const std::string name = "full-" + std::to_string(getpid()) + ".pcap";
  ASSERT_TRUE(handle_request(f.ctx, R"({"cmd":"capture.start","args":{"path":")" + name +
                                        R"(","mode":"all","max_bytes":10000000}})")["ok"]);
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 4096;
  const auto previous = signal(SIGXFSZ, SIG_IGN);  // write() fails with EFBIG instead
  setrlimit(RLIMIT_FSIZE, &small);
  const uint8_t frame[1000] = {};
  for (int i = 0; i < 100; ++i)
    f.core->capture.load()->offer(frame);
  const json stop = handle_request(f.ctx, R"({"cmd":"capture.stop"})");
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, previous);
  EXPECT_FALSE(stop["ok"]) << stop.dump();
  EXPECT_THAT(stop["error"].get<std::string>(), ::testing::HasSubstr("incomplete"));
  std::filesystem::remove(testing::capture_dir() + "/" + name);
}

// A capture may not be promised more than its file system holds.
TEST(ControlProtocolEffects, ACaptureLimitBeyondTheFreeSpaceIsRefused) {
  testing::ControlFixture f;
  const json r = handle_request(
      f.ctx,
      R"({"cmd":"capture.start","args":{"path":"huge.pcap","max_bytes":18000000000000000000}})");
  EXPECT_FALSE(r["ok"]) << r.dump();
  EXPECT_THAT(r["error"].get<std::string>(), ::testing::HasSubstr("bytes free below"));
  EXPECT_EQ(f.core->capture.load(), nullptr);
  EXPECT_FALSE(std::filesystem::exists(testing::capture_dir() + "/huge.pcap"));
}

TEST(ControlProtocolEffects, WatchSampleShowsEveryQueue) {
  testing::ControlFixture f;
  const json s = f.control->watch_sample();
  ASSERT_EQ(s["queues"].size(), 2u);
  EXPECT_EQ(s["queues"][1]["port"], "pb");
  EXPECT_EQ(s["policy"], "dt");
  EXPECT_EQ(s["queues"][0]["threshold_cells"], 4000);  // alpha 1 x empty buffer
  // Trimmed and returned headers both count as trimmed in the stream.
  f.core->buffer().stats(1).trimmed_pkts = 3;
  f.core->buffer().stats(1).bounced_pkts = 2;
  EXPECT_EQ(f.control->watch_sample()["queues"][1]["trimmed"], 5);
  EXPECT_EQ(watch_interval_ns(json::object()), 10'000'000u);
  EXPECT_EQ(watch_interval_ns({{"interval_us", 250}}), 250'000u);
}

// Two classes share queue 0 with different alphas: the sample shows the threshold of the class
// that arrived last (the first class mapped to the queue before any arrival).
TEST(ControlProtocolEffects, WatchSampleShowsTheLatestArrivalsClassThreshold) {
  testing::ControlFixture f(R"([switch]
name = "ctl-test"
[buffer]
size = "4000 cells"
cell_bytes = 80
[policy]
name = "dt"
[[classes]]
name = "big"
alpha = 1.0
dscp = [0]
[[classes]]
name = "small"
alpha = 0.25
dscp = [8]
[[ports]]
interface = "pa"
)");
  const auto threshold = [&] { return f.control->watch_sample()["queues"][0]["threshold_cells"]; };
  EXPECT_EQ(threshold(), 4000);  // class "big", alpha 1, empty buffer
  f.core->buffer().stats(0).last_class.store(1);
  EXPECT_EQ(threshold(), 1000);  // class "small", alpha 0.25
  EXPECT_EQ(f.control->stats()["ports"][0]["queues"][0]["threshold_cells"], 1000);
}

// A request nested 70 000 levels deep (in its id, or in a policy parameter) killed the daemon
// with a stack overflow while the parsed request was copied; it is refused before parsing.
TEST(ControlProtocolEffects, DeeplyNestedRequestsAreRefusedBeforeParsing) {
  testing::ControlFixture f;
  const std::string deep(70'000, '[');
  const std::string close(70'000, ']');
  for (const std::string& line :
       {R"({"cmd":"status","id":)" + deep + close + "}",
        R"({"cmd":"policy.set","args":{"name":"dt","params":{"alpha":)" + deep + close + "}}}",
        deep}) {
    const json reply = handle_request(f.ctx, line);
    EXPECT_FALSE(reply["ok"]);
    EXPECT_THAT(reply["error"].get<std::string>(), ::testing::HasSubstr("nested more than 64"));
  }
  // 64 levels are fine (and then wrong for other reasons).
  const json ok = handle_request(
      f.ctx, R"({"cmd":"status","id":)" + std::string(62, '[') + std::string(62, ']') + "}");
  EXPECT_TRUE(ok["ok"]) << ok.dump().substr(0, 200);
}

// A model path naming a FIFO is refused at once; the control thread never waits for a writer.
TEST(ControlProtocolEffects, AModelThatIsNotARegularFileIsRefusedAtOnce) {
  testing::ControlFixture f;
  std::filesystem::create_directories(testing::model_dir());
  const std::string fifo = testing::model_dir() + "/fifo-" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const json reply = handle_request(
      f.ctx,
      R"({"cmd":"policy.set","args":{"name":"credence","params":{"oracle":"forest","model":")" +
          fifo + R"("}}})");
  EXPECT_FALSE(reply["ok"]);
  EXPECT_THAT(reply["error"].get<std::string>(), ::testing::HasSubstr("not a regular file"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  std::filesystem::remove_all(testing::model_dir());
}

// A model named in a request is read (as root) only below [control] model_dir: not a device,
// not another directory, not through a symbolic link out of it. Relative names are taken from
// there.
TEST(ControlProtocolEffects, AModelIsReadOnlyFromTheModelDirectory) {
  testing::ControlFixture f;
  const std::string dir = testing::model_dir();
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(SHAREBUF_SOURCE_DIR "/data/credence-forest.json",
                             dir + "/forest.json");
  std::filesystem::create_symlink(SHAREBUF_SOURCE_DIR "/data/credence-forest.json",
                                  dir + "/outside.json");
  auto set = [&](const std::string& model) {
    return handle_request(
        f.ctx,
        R"({"cmd":"policy.set","args":{"name":"credence","params":{"oracle":"forest","model":")" +
            model + R"("}}})");
  };
  for (const std::string& model :
       {std::string("/dev/zero"), std::string("/etc/hostname"), dir + "/outside.json",
        dir + "/../" + std::filesystem::path(testing::capture_dir()).filename().string() + "/x",
        std::string(SHAREBUF_SOURCE_DIR "/data/credence-forest.json")}) {
    const json r = set(model);
    EXPECT_FALSE(r["ok"]) << model;
    EXPECT_THAT(r["error"].get<std::string>(), ::testing::HasSubstr("read only below")) << model;
  }
  EXPECT_EQ(f.core->policy().name(), "dt");
  const json ok = set("forest.json");
  ASSERT_TRUE(ok["ok"]) << ok.dump();
  EXPECT_EQ(ok["result"]["params"]["model"],
            std::filesystem::canonical(dir + "/forest.json").string());
  std::filesystem::remove_all(dir);
}

// docs/security.md names every command only admin peers may run, so an operator reading it
// knows what a read-only peer cannot do.
TEST(ControlSecurityDoc, NamesEveryAdminCommand) {
  std::ifstream in(SHAREBUF_SOURCE_DIR "/docs/security.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t begin = doc.find("**What a client may do.**");
  const size_t end = doc.find("\n\n", begin);
  ASSERT_NE(begin, std::string::npos);
  const std::string paragraph = doc.substr(begin, end - begin);
  for (const Command& c : control_commands()) {
    const std::string quoted = "`" + std::string(c.name) + "`";
    if (c.admin) {
      EXPECT_NE(paragraph.find(quoted), std::string::npos) << c.name;
    }
  }
}

}  // namespace
}  // namespace sharebuf::mgmt

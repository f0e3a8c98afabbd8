// Configuration files: a complete example parses into the expected SwitchConfig, and every kind
// of mistake is an error naming file, line, column and key.
#include "mgmt/config_loader.h"

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sharebuf::mgmt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr const char* kFull = R"(
[switch]
name = "lab"
mac_ageing = "60s"
on_stop = "drain"
rx_threads = 1
rx_busy_poll = "50us"
rx_park_after = "5ms"
realtime_priority = 5
port_lock_dir = "/tmp/lab-locks"

[buffer]
size = "1.6MB"
cell_bytes = 80
view = "probe"
probe_interval = "20us"
probe_delay = "3us"
probe_bytes = 34

[policy]
name = "dt"
alpha = 0.5

[classify]
mode = "rules"
[[classify.rules]]
proto = "udp"
dst_port = 5001
class = "bulk"
[[classify.rules]]
src = "198.18.0.0/24"
class = "interactive"

[[classes]]
name = "interactive"
queue = 0
group = "high"
role = "short"
alpha = 2.0
dscp = [46]

[[classes]]
name = "bulk"
queue = 1
ecn_threshold = "65 cells"

[[ports]]
interface = "p1"
rate = "100Mbit"
queues = 2
scheduler = "drr"
weights = [1, 3]
default_class = "bulk"
storm_pps = 2000

[[ports]]
interface = "p2"
queues = 2
scheduler = "drr_active"

[[static_macs]]
mac = "02:5b:00:00:00:01"
port = "p2"

[log]
level = "debug"
)";

TEST(ConfigLoader, FullExample) {
  const DaemonConfig c = parse_config(kFull, "lab.toml");
  const auto& sw = c.sw;
  EXPECT_EQ(sw.name, "lab");
  EXPECT_EQ(sw.mac_ageing_ns, 60'000'000'000u);
  EXPECT_TRUE(sw.drain_on_stop);
  EXPECT_EQ(sw.rx_threads, 1u);
  EXPECT_EQ(sw.rx_busy_poll_ns, 50'000u);
  EXPECT_EQ(sw.poll_mode, model::PollMode::kAdaptive);  // rx_busy_poll alone: spin, then block
  EXPECT_EQ(sw.rx_park_after_ns, 5'000'000u);
  EXPECT_EQ(sw.realtime_priority, 5);
  EXPECT_EQ(sw.port_lock_dir, "/tmp/lab-locks");
  EXPECT_EQ(sw.buffer.capacity_cells, 20000u);
  EXPECT_EQ(sw.buffer.view_mode, buffer::ViewMode::kProbe);
  EXPECT_EQ(sw.buffer.probe_interval_ns, 20'000u);
  EXPECT_EQ(sw.buffer.probe_delay_ns, 3'000u);
  EXPECT_EQ(sw.buffer.probe_bytes, 34u);
  EXPECT_EQ(sw.policy, "dt");
  EXPECT_EQ(sw.policy_params.values["alpha"], 0.5);
  EXPECT_THAT(sw.policy_params.where("alpha"), HasSubstr("lab.toml:22:"));
  ASSERT_EQ(sw.classes.size(), 2u);
  EXPECT_EQ(sw.classes[0].traffic.group, buffer::PriorityGroup::kHigh);
  EXPECT_EQ(sw.classes[0].traffic.role, policies::ProteanRole::kShort);
  EXPECT_EQ(sw.classes[0].traffic.alpha, 2.0);
  EXPECT_EQ(sw.classes[1].ecn_threshold_cells, 65u);
  EXPECT_EQ(sw.classify, model::ClassifyMode::kRules);
  ASSERT_EQ(sw.rules.size(), 2u);
  EXPECT_EQ(sw.rules[0].class_id, 1);
  EXPECT_EQ(sw.rules[1].src_ip, 0xc6120000u);
  EXPECT_EQ(sw.rules[1].src_prefix, 24);
  ASSERT_EQ(sw.ports.size(), 2u);
  EXPECT_EQ(sw.ports[0].rate_bps, 100'000'000u);
  EXPECT_EQ(sw.ports[0].scheduler, model::SchedulerKind::kDrr);
  EXPECT_EQ(sw.ports[1].scheduler, model::SchedulerKind::kDrrActive);
  EXPECT_EQ(sw.ports[0].default_class, 1);
  EXPECT_EQ(sw.ports[1].rate_bps, 0u);
  EXPECT_EQ(sw.ports[0].storm_pps, 2000u);
  EXPECT_EQ(sw.ports[1].storm_pps, 0u);
  ASSERT_EQ(sw.static_macs.size(), 1u);
  EXPECT_EQ(sw.static_macs[0].port, 1);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_NO_THROW(validate_config(sw));
}

const std::string kTwoPorts =
    "[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n[[ports]]\ninterface = \"b\"\n";

TEST(ConfigLoader, RoutesAndPortRoles) {
  const DaemonConfig c = parse_config(kTwoPorts +
                                          "[[ports]]\ninterface = \"up\"\nrole = \"fabric\"\n"
                                          "[[routes]]\nmac = \"02:00:00:00:00:09\"\n"
                                          "ports = [\"up\", \"b\"]\n"
                                          "[[routes]]\nmac = \"02:00:00:00:00:0a\"\n"
                                          "port = \"a\"\n",
                                      "fabric.toml");
  ASSERT_EQ(c.sw.ports.size(), 3u);
  EXPECT_FALSE(c.sw.ports[0].fabric);
  EXPECT_TRUE(c.sw.ports[2].fabric);
  ASSERT_EQ(c.sw.routes.size(), 2u);
  EXPECT_EQ(c.sw.routes[0].mac, 0x020000000009u);
  EXPECT_EQ(c.sw.routes[0].ports, (std::vector<uint16_t>{2, 1}));
  EXPECT_EQ(c.sw.routes[1].ports, (std::vector<uint16_t>{0}));
}

TEST(ConfigLoader, RxIoDefaultsToAfPacket) {
  const std::string ports = "[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n";
  EXPECT_EQ(parse_config(ports, "c.toml").sw.rx_io, model::RxIo::kAfPacket);
  EXPECT_EQ(parse_config("[switch]\nrx_io = \"af_xdp\"\n" + ports, "c.toml").sw.rx_io,
            model::RxIo::kAfXdp);
}

TEST(ConfigLoader, TxIoDefaultsToAfPacketAndTakesAfXdpWithAfXdpReceive) {
  const std::string ports = "[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n";
  EXPECT_EQ(parse_config(ports, "c.toml").sw.tx_io, model::TxIo::kAfPacket);
  EXPECT_EQ(parse_config("[switch]\nrx_io = \"af_xdp\"\n" + ports, "c.toml").sw.tx_io,
            model::TxIo::kAfPacket);
  EXPECT_EQ(
      parse_config("[switch]\nrx_io = \"af_xdp\"\ntx_io = \"af_xdp\"\n" + ports, "c.toml").sw.tx_io,
      model::TxIo::kAfXdp);
}

TEST(ConfigLoader, PollModes) {
  const std::string ports = "[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n";
  const auto sw = [&](const std::string& keys) {
    return parse_config("[switch]\n" + keys + ports, "c.toml").sw;
  };
  EXPECT_EQ(sw("").poll_mode, model::PollMode::kInterrupt);
  EXPECT_EQ(sw("").rx_busy_poll_ns, 0u);
  EXPECT_EQ(sw("rx_busy_poll = 0\n").poll_mode, model::PollMode::kInterrupt);
  EXPECT_EQ(sw("poll_mode = \"busy-poll\"\n").poll_mode, model::PollMode::kBusyPoll);
  const model::SwitchConfig adaptive = sw("poll_mode = \"adaptive\"\n");
  EXPECT_EQ(adaptive.poll_mode, model::PollMode::kAdaptive);
  EXPECT_EQ(adaptive.rx_busy_poll_ns, model::kAdaptiveSpinDefaultNs);
  EXPECT_EQ(sw("poll_mode = \"adaptive\"\nrx_busy_poll = \"1ms\"\n").rx_busy_poll_ns, 1'000'000u);
}

TEST(ConfigLoader, PerCpuRxHasOneWorkerPerCpu) {
  const DaemonConfig c = parse_config(
      "[switch]\nrx_mode = \"per-cpu\"\n[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n",
      "c.toml");
  EXPECT_EQ(c.sw.rx_mode, model::RxMode::kPerCpu);
  // One worker per CPU however many ports; per port, one worker per port.
  EXPECT_EQ(model::rx_workers(c.sw), model::machine_cpus());
  EXPECT_EQ(model::machine_cpus(), static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF)));
  DaemonConfig per_port = c;
  per_port.sw.rx_mode = model::RxMode::kPerPort;
  EXPECT_EQ(model::rx_workers(per_port.sw), 1u);
}

TEST(ConfigLoader, MinimalConfigGetsDefaults) {
  const DaemonConfig c =
      parse_config("[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n", "m.toml");
  EXPECT_EQ(c.sw.policy, "dt");
  ASSERT_EQ(c.sw.classes.size(), 1u);
  EXPECT_EQ(c.sw.buffer.cell_bytes, 80u);
  EXPECT_EQ(c.sw.ports[0].num_queues, 1u);
  EXPECT_EQ(c.sw.port_lock_dir, "/run/sharebuf/ports");
  EXPECT_EQ(c.sw.rx_park_after_ns, 2'000'000u);
  EXPECT_EQ(c.sw.rx_mode, model::RxMode::kPerPort);
  EXPECT_EQ(c.sw.ports[0].storm_pps, 0u);
  EXPECT_EQ(c.sw.classes[0].overflow, model::OverflowAction::kDrop);
  EXPECT_EQ(c.sw.trim.size, 128u);
  EXPECT_TRUE(c.sw.trim.fix_lengths);
  EXPECT_EQ(c.sw.trim.dscp, -1);
  EXPECT_EQ(c.sw.ports[0].trim_queue, 0u);
  EXPECT_EQ(c.sw.ports[0].trim_dscp_toward, -1);
}

TEST(ConfigLoader, ControlLimits) {
  const char* text = R"([buffer]
size = 1000
[[ports]]
interface = "a"
[control]
socket_group = "0"
admin_group = "root"
max_clients = 100
operator_reserve = 10
max_clients_per_uid = 5
max_watches_per_uid = 2
min_watch_interval = "50ms"
cpu_share = 0.2
)";
  const ControlConfig c = parse_config(text, "c.toml").control;
  EXPECT_EQ(c.admin_group, "root");
  EXPECT_EQ(c.operator_reserve, 10u);
  EXPECT_EQ(c.max_clients_per_uid, 5u);
  EXPECT_EQ(c.max_watches_per_uid, 2u);
  EXPECT_EQ(c.min_watch_interval_ns, 50'000'000u);
  EXPECT_DOUBLE_EQ(c.cpu_share, 0.2);
  // The reserve defaults to 8, or half of a smaller max_clients.
  EXPECT_EQ(parse_config("[buffer]\nsize = 9\n[[ports]]\ninterface = \"a\"\n", "d.toml")
                .control.operator_reserve,
            8u);
  EXPECT_EQ(
      parse_config("[buffer]\nsize = 9\n[[ports]]\ninterface = \"a\"\n[control]\nmax_clients = 6\n",
                   "d.toml")
          .control.operator_reserve,
      3u);
}

TEST(ConfigLoader, TrimmingKeys) {
  const DaemonConfig c = parse_config(R"([buffer]
size = 1000
[[classes]]
name = "data"
overflow = "trim"
[trimming]
trim_size = 256
trim_fix_lengths = false
trim_dscp = 8
[[ports]]
interface = "a"
queues = 2
trim_queue = 1
trim_dscp_toward = 12
)",
                                      "t.toml");
  EXPECT_EQ(c.sw.classes[0].overflow, model::OverflowAction::kTrim);
  EXPECT_EQ(c.sw.trim.size, 256u);
  EXPECT_FALSE(c.sw.trim.fix_lengths);
  EXPECT_EQ(c.sw.trim.dscp, 8);
  EXPECT_EQ(c.sw.ports[0].trim_queue, 1u);
  EXPECT_EQ(c.sw.ports[0].trim_dscp_toward, 12);
  const DaemonConfig r = parse_config(R"([buffer]
size = 1000
[[classes]]
name = "data"
overflow = "return-to-sender"
return_threshold = "8KB"
[trimming]
return_dscp = 7
[[ports]]
interface = "a"
)",
                                      "r.toml");
  EXPECT_EQ(r.sw.classes[0].overflow, model::OverflowAction::kReturnToSender);
  EXPECT_EQ(r.sw.classes[0].return_threshold_cells, 100u);  // 8000 B in 80 B cells
  EXPECT_EQ(r.sw.trim.return_dscp, 7);
}

TEST(ConfigLoader, TofinoApproxKeys) {
  const DaemonConfig c = parse_config(R"([buffer]
size = 1000
[[classes]]
name = "data"
overflow = "trim"
[trimming]
mode = "tofino-approx"
pipelines = 2
meters = "two"
line_rate = "10Gbit"
meter_burst = 6000
t0 = "3us"
t1 = "18us"
recirc_rate = "1Gbit"
recirc_queue = 20000
recirc_latency = "2us"
trim_newest = 0.5
seed = 7
header_reserve = 4
header_full = "drop"
[[ports]]
interface = "a"
[[ports]]
interface = "b"
rate = "1Gbit"
)",
                                      "t.toml");
  EXPECT_TRUE(c.sw.trim.tofino_approx);
  EXPECT_EQ(c.sw.rx_threads, 2u);
  EXPECT_EQ(c.sw.trim.meters, model::MeterVariant::kTwoMeters);
  EXPECT_EQ(c.sw.trim.line_rate_bps, 10'000'000'000u);
  EXPECT_EQ(c.sw.trim.meter_burst_bytes, 6000u);
  EXPECT_EQ(c.sw.trim.t0_ns, 3'000u);
  EXPECT_EQ(c.sw.trim.t1_ns, 18'000u);
  EXPECT_EQ(c.sw.trim.recirc_rate_bps, 1'000'000'000u);
  EXPECT_EQ(c.sw.trim.recirc_queue_bytes, 20'000u);
  EXPECT_EQ(c.sw.trim.recirc_latency_ns, 2'000u);
  EXPECT_DOUBLE_EQ(c.sw.trim.trim_newest, 0.5);
  EXPECT_EQ(c.sw.trim.seed, 7u);
  EXPECT_EQ(c.sw.trim.header_reserve, 4u);
  EXPECT_FALSE(c.sw.trim.header_full_return);
  EXPECT_EQ(model::header_reserve_cells(c.sw), 4u * 2) << "128-byte headers in 80-byte cells";
  // The meters' 100 %: a port's own rate first, else line_rate.
  EXPECT_EQ(model::meter_line_rates(c.sw),
            (std::vector<uint64_t>{10'000'000'000u, 1'000'000'000u}));
  const DaemonConfig d =
      parse_config("[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n", "d.toml");
  EXPECT_FALSE(d.sw.trim.tofino_approx);
  EXPECT_EQ(d.sw.trim.t0_ns, 6'000u);  // the paper's
  EXPECT_EQ(d.sw.trim.t1_ns, 12'000u);
  EXPECT_EQ(d.sw.trim.meters, model::MeterVariant::kThreeMeters);
  EXPECT_EQ(d.sw.trim.header_reserve, 8u);
  EXPECT_TRUE(d.sw.trim.header_full_return);
  EXPECT_EQ(model::header_reserve_cells(d.sw), 0u) << "no class trims: nothing set aside";
}

struct BadCase {
  const char* name;
  std::string text;
  std::vector<std::string> expect;  // substrings of the error
};

std::string with_ports(const std::string& extra) {
  return "[buffer]\nsize = 1000\n[[ports]]\ninterface = \"a\"\n" + extra;
}

TEST(ConfigLoader, EveryMistakeNamesFileLineAndKey) {
  const BadCase cases[] = {
      {"syntax", "[buffer\nsize = 1", {"bad.toml:1:"}},
      {"unknown top key", with_ports("colour = 1\n"), {"bad.toml:5:1", "unknown key 'colour'"}},
      {"unknown buffer key",
       "[buffer]\nsize = 10\nsise = 3\n[[ports]]\ninterface = \"a\"\n",
       {"bad.toml:3:", "[buffer]", "unknown key 'sise'"}},
      {"no buffer", "[[ports]]\ninterface = \"a\"\n", {"[buffer]", "required"}},
      {"bad size unit",
       "[buffer]\nsize = \"3 parsecs\"\n[[ports]]\ninterface = \"a\"\n",
       {"bad.toml:2:", "key 'size'", "unknown size unit"}},
      {"bad rate",
       "[buffer]\nsize = 10\n[[ports]]\ninterface = \"a\"\nrate = \"fast\"\n",
       {"bad.toml:5:", "[[ports]] #1", "key 'rate'"}},
      {"bad view",
       "[buffer]\nsize = 10\nview = \"fuzzy\"\n[[ports]]\ninterface = \"a\"\n",
       {"bad.toml:3:", "key 'view'", "exact, probe"}},
      {"probe interval outside its declared range",
       "[buffer]\nsize = 10\nprobe_interval = \"500ns\"\n[[ports]]\ninterface = \"a\"\n",
       {"bad.toml:3:", "key 'probe_interval'", "1 us – 1 s"}},
      {"probe delay beyond the registers kept",
       "[buffer]\nsize = 10\nprobe_interval = \"1us\"\nprobe_delay = \"1ms\"\n"
       "[[ports]]\ninterface = \"a\"\n",
       {"bad.toml:4:", "key 'probe_delay'", "at most 254 probe intervals"}},
      {"probes heavier than a frame",
       "[buffer]\nsize = 10\nprobe_bytes = 9217\n[[ports]]\ninterface = \"a\"\n",
       {"bad.toml:3:", "key 'probe_bytes'", "9216"}},
      {"unknown policy",
       with_ports("[policy]\nname = \"magic\"\n"),
       {"bad.toml:6:", "unknown policy 'magic'", "dt"}},
      {"no ports", "[buffer]\nsize = 10\n", {"at least one [[ports]]"}},
      {"duplicate port", with_ports("[[ports]]\ninterface = \"a\"\n"), {"listed twice"}},
      {"class queue beyond port",
       with_ports("[[classes]]\nname = \"x\"\nqueue = 3\n"),
       {"[[ports]] #1", "queue 3"}},
      {"unknown default class",
       with_ports("default_class = \"nope\"\n"),
       {"key 'default_class'", "no class named 'nope'"}},
      {"bad dscp",
       with_ports("[[classes]]\nname = \"x\"\ndscp = [64]\n"),
       {"key 'dscp'", "between 0 and 63"}},
      {"bad mac", with_ports("[[static_macs]]\nmac = \"zz\"\nport = \"a\"\n"), {"key 'mac'"}},
      {"static mac port",
       with_ports("[[static_macs]]\nmac = \"02:00:00:00:00:01\"\nport = \"q\"\n"),
       {"key 'port'", "no port with interface 'q'"}},
      {"weights count",
       with_ports("queues = 2\nweights = [1]\n"),
       {"key 'weights'", "1 weights for 2 queues"}},
      {"rule prefix",
       with_ports("[classify]\nmode = \"rules\"\n[[classify.rules]]\nsrc = \"1.2.3/8\"\nclass = "
                  "\"default\"\n"),
       {"key 'src'", "IPv4 address or prefix"}},
      {"relative lock dir",
       "[switch]\nport_lock_dir = \"locks\"\n" + with_ports(""),
       {"bad.toml:2:", "key 'port_lock_dir'", "absolute"}},
      {"storm rate", with_ports("storm_pps = -1\n"), {"bad.toml:5:", "key 'storm_pps'"}},
      {"trim queue beyond the port",
       with_ports("queues = 2\ntrim_queue = 2\n"),
       {"bad.toml:6:", "key 'trim_queue'", "2 queue(s)"}},
      {"trim size", with_ports("[trimming]\ntrim_size = 32\n"), {"bad.toml:6:", "key 'trim_size'"}},
      {"trim dscp", with_ports("[trimming]\ntrim_dscp = 64\n"), {"key 'trim_dscp'", "63"}},
      {"tofino-approx without a rate",
       with_ports("[trimming]\nmode = \"tofino-approx\"\n"),
       {"bad.toml:6:", "key 'mode'", "port 'a' has no rate"}},
      {"pipelines against rx_threads",
       "[switch]\nrx_threads = 1\n" + with_ports("[trimming]\npipelines = 2\n"),
       {"key 'pipelines'", "rx_threads is 1"}},
      {"rx_mode",
       "[switch]\nrx_mode = \"per-core\"\n" + with_ports(""),
       {"bad.toml:2:", "key 'rx_mode'", "per-port, per-cpu"}},
      {"rx_threads with per-cpu RX",
       "[switch]\nrx_mode = \"per-cpu\"\nrx_threads = 2\n" + with_ports(""),
       {"bad.toml:3:", "key 'rx_threads'", "one RX worker per CPU"}},
      {"poll_mode",
       "[switch]\npoll_mode = \"spin\"\n" + with_ports(""),
       {"bad.toml:2:", "key 'poll_mode'", "interrupt, adaptive, busy-poll"}},
      {"a spin time with a mode that does not spin then block",
       "[switch]\npoll_mode = \"busy-poll\"\nrx_busy_poll = \"50us\"\n" + with_ports(""),
       {"bad.toml:3:", "key 'rx_busy_poll'", "never blocks"}},
      {"adaptive polling without a spin",
       "[switch]\npoll_mode = \"adaptive\"\nrx_busy_poll = 0\n" + with_ports(""),
       {"bad.toml:3:", "key 'rx_busy_poll'", "above 0"}},
      {"rx_io",
       "[switch]\nrx_io = \"xdp\"\n" + with_ports(""),
       {"bad.toml:2:", "key 'rx_io'", "af_packet, af_xdp"}},
      {"tx_io",
       "[switch]\ntx_io = \"xdp\"\n" + with_ports(""),
       {"bad.toml:2:", "key 'tx_io'", "af_packet, af_xdp"}},
      {"AF_XDP transmit without AF_XDP receive",
       "[switch]\ntx_io = \"af_xdp\"\n" + with_ports(""),
       {"bad.toml:2:", "key 'tx_io'", "needs rx_io = \"af_xdp\""}},
      {"af_xdp with per-cpu RX",
       "[switch]\nrx_mode = \"per-cpu\"\nrx_io = \"af_xdp\"\n" + with_ports(""),
       {"bad.toml:3:", "key 'rx_io'", "per-cpu"}},
      {"pipelines with per-cpu RX",
       "[switch]\nrx_mode = \"per-cpu\"\n" + with_ports("[trimming]\npipelines = 2\n"),
       {"key 'pipelines'", "per-cpu"}},
      {"trim mode", with_ports("[trimming]\nmode = \"fast\"\n"), {"key 'mode'", "ideal"}},
      {"trim_newest", with_ports("[trimming]\ntrim_newest = 2\n"), {"key 'trim_newest'"}},
      {"header reserve larger than the buffer",
       "[buffer]\nsize = 20\n[[classes]]\nname = \"x\"\noverflow = \"trim\"\n[trimming]\n"
       "header_reserve = 8\n[[ports]]\ninterface = \"a\"\n[[ports]]\ninterface = \"b\"\n",
       {"bad.toml:", "key 'header_reserve'", "do not fit"}},
      {"header_full",
       with_ports("[trimming]\nheader_full = \"bounce\"\n"),
       {"key 'header_full'", "\"return-to-sender\", \"drop\""}},
      {"overflow action",
       with_ports("[[classes]]\nname = \"x\"\noverflow = \"bounce\"\n"),
       {"key 'overflow'", "drop, trim, return-to-sender"}},
      {"return threshold without return-to-sender",
       with_ports("[[classes]]\nname = \"x\"\nreturn_threshold = 100\n"),
       {"key 'return_threshold'", "return-to-sender"}},
      {"long interface",
       "[buffer]\nsize = 10\n[[ports]]\ninterface = \"a-very-long-interface-name\"\n",
       {"key 'interface'", "15 characters"}},
      {"admin group that does not exist",
       with_ports("[control]\nadmin_group = \"no-such-group-here\"\n"),
       {"bad.toml:6:", "key 'admin_group'", "no group 'no-such-group-here'"}},
      {"empty admin group",
       with_ports("[control]\nadmin_group = \"\"\n"),
       {"key 'admin_group'", "every client run every command"}},
      {"socket group -1",
       with_ports("[control]\nsocket_group = \"-1\"\n"),
       {"key 'socket_group'", "no group '-1'"}},
      {"socket group (gid_t)-1",
       with_ports("[control]\nsocket_group = \"4294967295\"\n"),
       {"key 'socket_group'"}},
      {"operator reserve past max_clients",
       with_ports("[control]\nmax_clients = 4\noperator_reserve = 4\n"),
       {"key 'operator_reserve'", "below max_clients (4)"}},
      {"idle timeout past 2^63",
       with_ports("[control]\nidle_timeout = \"9223372036854775808\"\n"),
       {"key 'idle_timeout'", "out of range"}},
      {"idle timeout of years",
       with_ports("[control]\nidle_timeout = \"3000000000s\"\n"),
       {"key 'idle_timeout'", "7 days"}},
      {"cpu share", with_ports("[control]\ncpu_share = 2\n"), {"key 'cpu_share'"}},
      {"watch floor",
       with_ports("[control]\nmin_watch_interval = \"1us\"\n"),
       {"key 'min_watch_interval'", "100us"}},
      {"port role",
       "[buffer]\nsize = 10\n[[ports]]\ninterface = \"a\"\nrole = \"uplink\"\n",
       {"bad.toml:5:", "key 'role'", "edge, fabric"}},
      {"route to no port",
       kTwoPorts + "[[routes]]\nmac = \"02:00:00:00:00:09\"\nports = [\"a\", \"z\"]\n",
       {"bad.toml:9:", "[[routes]] #1", "key 'ports'", "no port with interface 'z'"}},
      {"route with port and ports",
       kTwoPorts + "[[routes]]\nmac = \"02:00:00:00:00:09\"\nport = \"a\"\nports = [\"b\"]\n",
       {"[[routes]] #1", "give 'port'"}},
      {"route with neither",
       kTwoPorts + "[[routes]]\nmac = \"02:00:00:00:00:09\"\n",
       {"[[routes]] #1", "give 'port'"}},
      {"route for a group address",
       kTwoPorts + "[[routes]]\nmac = \"01:00:5e:00:00:01\"\nport = \"a\"\n",
       {"bad.toml:8:", "group address"}},
      {"route listing a port twice",
       kTwoPorts + "[[routes]]\nmac = \"02:00:00:00:00:09\"\nports = [\"a\", \"a\"]\n",
       {"key 'ports'", "listed twice"}},
      {"two routes for one MAC",
       kTwoPorts + "[[routes]]\nmac = \"02:00:00:00:00:09\"\nport = \"a\"\n"
                   "[[routes]]\nmac = \"02:00:00:00:00:09\"\nport = \"b\"\n",
       {"[[routes]] #2", "a second route"}},
      {"a route and a static MAC",
       kTwoPorts + "[[static_macs]]\nmac = \"02:00:00:00:00:09\"\nport = \"a\"\n"
                   "[[routes]]\nmac = \"02:00:00:00:00:09\"\nport = \"b\"\n",
       {"[[routes]] #1", "[[static_macs]] entry too"}},
  };
  for (const BadCase& c : cases) {
    try {
      parse_config(c.text, "bad.toml");
      ADD_FAILURE() << c.name << ": no error";
    } catch (const ConfigError& e) {
      for (const auto& s : c.expect) {
        EXPECT_THAT(e.what(), HasSubstr(s)) << c.name;
      }
    }
  }
}

TEST(ConfigLoader, PolicyParametersAreValidatedWithTheirLine) {
  const DaemonConfig c = parse_config(with_ports("[policy]\nname = \"dt\"\nalhpa = 2\n"), "p.toml");
  EXPECT_THAT([&] { validate_config(c.sw); },
              ThrowsMessage<ConfigError>(AllOf(HasSubstr("p.toml:7:"), HasSubstr("'alhpa'"))));
}

TEST(ConfigLoader, MissingFile) {
  EXPECT_THAT([] { load_config_file("/nonexistent/sharebuf.toml"); },
              ThrowsMessage<ConfigError>(HasSubstr("/nonexistent/sharebuf.toml: cannot open")));
}

TEST(ConfigLoader, ShippedExamplesAreValid) {
  for (const char* name : {"demo.toml", "two-queues.toml"}) {
    const std::string path = std::string(SHAREBUF_SOURCE_DIR) + "/mgmt/examples/" + name;
    EXPECT_NO_THROW(validate_config(load_config_file(path).sw)) << path;
  }
}

// A FIFO as --config used to hang --check-config; a device or an oversized file is refused too.
TEST(ConfigLoader, AConfigThatIsNotARegularFileIsRefusedAtOnce) {
  const std::string fifo =
      std::filesystem::temp_directory_path() / ("sharebuf-cfg-fifo-" + std::to_string(getpid()));
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(
      [&] { load_config_file(fifo); },
      ThrowsMessage<ConfigError>(HasSubstr("the configuration file is not a regular file")));
  std::filesystem::remove(fifo);
  EXPECT_THAT([] { load_config_file("/dev/zero"); },
              ThrowsMessage<ConfigError>(HasSubstr("not a regular file")));
}

}  // namespace
}  // namespace sharebuf::mgmt

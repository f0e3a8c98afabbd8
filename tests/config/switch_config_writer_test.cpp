// The switch's configuration written as TOML reads back as the same configuration: every example
// file, and one that sets every kind of key, survive read -> write -> read unchanged.
#include "config/switch_config_writer.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/switch_config_reader.h"
#include "model/mac_table.h"

namespace sharebuf::config {
namespace {

using ::testing::HasSubstr;

// Equal as far as every engine is concerned: what it writes is the same, and the parts read
// through other means agree.
void expect_round_trip(const model::SwitchConfig& a) {
  const std::string text = write_switch_config(a);
  const model::SwitchConfig b = parse_switch_config(text, "written.toml");
  EXPECT_EQ(write_switch_config(b), text);
  EXPECT_EQ(b.policy, a.policy);
  EXPECT_EQ(b.policy_params.values, a.policy_params.values);
  EXPECT_EQ(b.buffer.capacity_cells, a.buffer.capacity_cells);
  EXPECT_EQ(b.buffer.probe_interval_ns, a.buffer.probe_interval_ns);
  ASSERT_EQ(b.ports.size(), a.ports.size());
  for (size_t p = 0; p < a.ports.size(); ++p) {
    EXPECT_EQ(b.ports[p].rate_bps, a.ports[p].rate_bps);
    EXPECT_EQ(b.ports[p].num_queues, a.ports[p].num_queues);
    EXPECT_EQ(b.ports[p].weights, a.ports[p].weights);
    EXPECT_EQ(b.ports[p].default_class, a.ports[p].default_class);
    EXPECT_EQ(b.ports[p].fabric, a.ports[p].fabric);
  }
  ASSERT_EQ(b.classes.size(), a.classes.size());
  for (size_t c = 0; c < a.classes.size(); ++c) {
    EXPECT_EQ(b.classes[c].traffic.alpha, a.classes[c].traffic.alpha);
    EXPECT_EQ(b.classes[c].overflow, a.classes[c].overflow);
    EXPECT_EQ(b.classes[c].ecn_threshold_cells, a.classes[c].ecn_threshold_cells);
  }
  EXPECT_EQ(b.trim.size, a.trim.size);
  EXPECT_EQ(b.trim.tofino_approx, a.trim.tofino_approx);
  EXPECT_EQ(b.rules.size(), a.rules.size());
  EXPECT_EQ(b.static_macs.size(), a.static_macs.size());
  ASSERT_EQ(b.routes.size(), a.routes.size());
  for (size_t r = 0; r < a.routes.size(); ++r) {
    EXPECT_EQ(b.routes[r].mac, a.routes[r].mac);
    EXPECT_EQ(b.routes[r].ports, a.routes[r].ports);
  }
}

TEST(SwitchConfigWriter, TheExamplesReadBackUnchanged) {
  for (const char* f :
       {"mgmt/examples/demo.toml", "mgmt/examples/two-queues.toml", "p4/examples/dt.toml",
        "p4/examples/fb.toml", "p4/examples/protean.toml", "p4/examples/trim.toml"}) {
    SCOPED_TRACE(f);
    expect_round_trip(load_switch_config(std::string(SHAREBUF_SOURCE_DIR) + "/" + f));
  }
}

// The [switch] keys of how the datapath waits and does its I/O, written and read back.
TEST(SwitchConfigWriter, PollModesAndPortIoReadBack) {
  for (const char* keys : {"", "poll_mode = \"busy-poll\"\n", "rx_busy_poll = \"30us\"\n",
                           "poll_mode = \"adaptive\"\n", "rx_io = \"af_xdp\"\n",
                           "rx_io = \"af_xdp\"\ntx_io = \"af_xdp\"\n"}) {
    SCOPED_TRACE(keys);
    const model::SwitchConfig c = parse_switch_config(
        std::string("[switch]\n") + keys + "[buffer]\nsize = 100\n[[ports]]\ninterface = \"a\"\n",
        "c.toml");
    const model::SwitchConfig b = parse_switch_config(write_switch_config(c), "written.toml");
    EXPECT_EQ(b.poll_mode, c.poll_mode);
    EXPECT_EQ(b.rx_busy_poll_ns, c.rx_busy_poll_ns);
    EXPECT_EQ(b.rx_io, c.rx_io);
    EXPECT_EQ(b.tx_io, c.tx_io);
  }
}

TEST(SwitchConfigWriter, EveryKindOfKeyReadsBackUnchanged) {
  const model::SwitchConfig c = parse_switch_config(R"([switch]
name = "all"
mac_ageing = "5s"
rx_threads = 2
[buffer]
size = "3000 cells"
cell_bytes = 100
view = "probe"
probe_interval = "2us"
probe_delay = "1us"
[policy]
name = "abm"
alpha_high = 4.0
[[classes]]
name = "data"
queue = 1
alpha = 0.5
group = "high"
role = "short"
ecn_threshold = "20 cells"
dscp = [10, 12]
overflow = "trim"
[[classes]]
name = "ctl"
pcp = [7]
overflow = "return-to-sender"
return_threshold = 30
[classify]
mode = "rules"
[[classify.rules]]
proto = "udp"
dst = "198.18.0.0/24"
dst_port = 5201
class = "data"
[trimming]
trim_size = 200
mode = "tofino-approx"
t0 = "7us"
[[ports]]
interface = "a"
rate = "10Gbit"
queues = 2
scheduler = "drr"
weights = [1, 3]
default_class = "ctl"
trim_queue = 1
trim_dscp_toward = 9
[[ports]]
interface = "b"
rate = "1Gbit"
queues = 2
[[ports]]
interface = "c"
rate = "1Gbit"
queues = 2
role = "fabric"
[[static_macs]]
mac = "02:00:00:00:00:0b"
port = "b"
[[routes]]
mac = "02:00:00:00:00:0c"
ports = ["c", "a"]
)",
                                                    "all.toml");
  expect_round_trip(c);
  const std::string text = write_switch_config(c);
  EXPECT_THAT(text, HasSubstr("alpha_high = 4.0"));
  EXPECT_THAT(text, HasSubstr("dst = '198.18.0.0/24'"));
  EXPECT_THAT(text, HasSubstr("mac = '02:00:00:00:00:0b'"));
  EXPECT_THAT(text, HasSubstr("role = 'fabric'"));
  EXPECT_THAT(text, HasSubstr("ports = [ 'c', 'a' ]"));
}

// A switch built in code (a replay scenario) has the reader's defaults written out, its default
// class among them.
TEST(SwitchConfigWriter, ASwitchBuiltInCodeReadsBack) {
  model::SwitchConfig c;
  c.buffer.capacity_cells = 500;
  c.ports.push_back({.name = "p0", .rate_bps = 1'000'000'000});
  c.ports.push_back({.name = "p1", .rate_bps = 1'000'000'000});
  EXPECT_THAT(write_switch_config(c), HasSubstr("[[classes]]\ngroup = 'low'\nname = 'default'"));
  c.classes.push_back({});
  expect_round_trip(c);
}

}  // namespace
}  // namespace sharebuf::config

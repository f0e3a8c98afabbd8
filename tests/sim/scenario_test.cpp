// sharebuf-sim's scenario files (sim/ns3/scenario.h): the switches a topology makes (ports,
// rates, per-role tables), the workloads' derived values, --set overrides, and that every
// mistake is refused with the file, line and key that caused it.
#include "sim/ns3/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "config/switch_config_reader.h"

namespace sharebuf::sim {
namespace {

class ScenarioFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sb-scenario-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& text) {
    const std::string path = (dir_ / "s.toml").string();
    std::ofstream(path) << text;
    return path;
  }
  // The error load_scenario throws for `text` (empty if it does not throw).
  std::string error(const std::string& text, std::vector<std::string> overrides = {}) {
    try {
      load_scenario(write(text), overrides);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

const char* kFabric = R"([topology]
kind = "leaf-spine"
spines = 2
leaves = 3
hosts_per_leaf = 4
host_rate = "10Gbit"
fabric_rate = "40Gbit"
delay = "2us"

[switches.buffer]
size = "1MB"
[switches.policy]
name = "dt"
alpha = 0.5
[switches.ports]
queues = 2
scheduler = "rr"
[switches.spine.policy]
name = "cs"

[workload.websearch]
load = 0.5
[workload.incast]
rate = 10
fan_in = 4
size = "50%"

[run]
duration = "10ms"
)";

TEST_F(ScenarioFile, FabricMakesLeavesThenSpinesWithTheirPortsAndRates) {
  const Scenario s = load_scenario(write(kFabric), {});
  EXPECT_TRUE(s.leaf_spine);
  EXPECT_EQ(s.hosts, 12u);
  ASSERT_EQ(s.switches.size(), 5u);
  EXPECT_EQ(s.switches[0].name, "leaf0");
  EXPECT_EQ(s.switches[3].name, "spine0");
  // 4 hosts x 10 Gbit/s against 2 uplinks x 40 Gbit/s.
  EXPECT_DOUBLE_EQ(s.oversubscription, 0.5);
  EXPECT_EQ(s.ecmp_seed, 0u);
  EXPECT_EQ(load_scenario(write(kFabric), {"topology.ecmp_seed=7"}).ecmp_seed, 7u);
  // Each switch's configuration is sharebufd's: read it back as sharebufd would.
  const model::SwitchConfig leaf = config::parse_switch_config(s.switches[0].config_toml, "leaf0");
  ASSERT_EQ(leaf.ports.size(), 6u);
  EXPECT_EQ(leaf.ports[0].name, "h0");
  EXPECT_EQ(leaf.ports[0].rate_bps, 10'000'000'000u);
  EXPECT_EQ(leaf.ports[4].name, "spine0");
  EXPECT_EQ(leaf.ports[4].rate_bps, 40'000'000'000u);
  EXPECT_EQ(leaf.ports[4].num_queues, 2u);
  EXPECT_EQ(leaf.policy, "dt");
  // [switches.spine.policy] replaces the policy table on spines only.
  const model::SwitchConfig spine =
      config::parse_switch_config(s.switches[4].config_toml, "spine1");
  EXPECT_EQ(spine.policy, "cs");
  ASSERT_EQ(spine.ports.size(), 3u);
  EXPECT_EQ(spine.ports[2].name, "leaf2");
  // "50%" of a leaf's buffer (1 MB).
  EXPECT_EQ(s.incast.bytes, 500'000u);
  EXPECT_TRUE(s.incast.one_leaf);
  EXPECT_TRUE(s.websearch.other_leaf);
}

TEST_F(ScenarioFile, OverridesApplyBeforeValidation) {
  // A whole policy table replaced from the command line: DT's alpha goes with it.
  const Scenario s = load_scenario(write(kFabric), {"switches.policy={name = \"protean\"}"});
  EXPECT_EQ(config::parse_switch_config(s.switches[0].config_toml, "leaf0").policy, "protean");
  // An override the policy refuses is refused with the override's name.
  const std::string e = error(kFabric, {"switches.policy.alpha=-1"});
  EXPECT_NE(e.find("--set switches.policy.alpha"), std::string::npos) << e;
}

TEST_F(ScenarioFile, SynTimeoutIsRtoMinUnlessSetAndBounded) {
  const Scenario d = load_scenario(write(kFabric), {});
  EXPECT_EQ(d.syn_timeout_ns, 0u);  // ns-3's ConnTimeout then takes rto_min
  EXPECT_EQ(d.syn_retries, 6u);
  const Scenario linux_like =
      load_scenario(write(kFabric), {"transport.syn_timeout=1s", "transport.syn_retries=6"});
  EXPECT_EQ(linux_like.syn_timeout_ns, 1'000'000'000u);
  const std::string e = error(kFabric, {"transport.syn_timeout=20s"});
  EXPECT_NE(e.find("syn_timeout"), std::string::npos) << e;
  EXPECT_NE(e.find("between 1us and 10s"), std::string::npos) << e;
}

TEST_F(ScenarioFile, EcnIsOnForDctcpAndChosenForTheOthers) {
  EXPECT_TRUE(load_scenario(write(kFabric), {}).ecn);  // kFabric's cc is dctcp
  EXPECT_FALSE(load_scenario(write(kFabric), {"transport.cc=newreno"}).ecn);
  const Scenario reno_ecn =
      load_scenario(write(kFabric), {"transport.cc=newreno", "transport.ecn=true"});
  EXPECT_TRUE(reno_ecn.ecn);
  EXPECT_EQ(reno_ecn.cc, "newreno");
  const std::string e = error(kFabric, {"transport.ecn=false"});
  EXPECT_NE(e.find("dctcp needs ECN"), std::string::npos) << e;
}

TEST_F(ScenarioFile, OverrideValuesAreTomlOrStrings) {
  const Scenario s = load_scenario(
      write(kFabric), {"workload.websearch.load=0.8", "run.seed=7", "topology.delay=5us"});
  EXPECT_DOUBLE_EQ(s.websearch.load, 0.8);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.delay_ns, 5000u);
  EXPECT_NE(s.text.find("--set run.seed=7"), std::string::npos);
}

TEST_F(ScenarioFile, EveryMistakeNamesFileLineAndKey) {
  struct Case {
    std::string from, to, expect;
  };
  const std::vector<Case> cases = {
      {"kind = \"leaf-spine\"", "kind = \"ring\"", "s.toml:2:8: [topology] key 'kind'"},
      {"spines = 2", "spines = 0", "s.toml:3:10: [topology] key 'spines': must be between 1"},
      {"delay = \"2us\"", "delay = \"2 parsecs\"", "[topology] key 'delay'"},
      {"size = \"1MB\"", "size = \"1 MBB\"", "s.toml:11:8: [buffer] key 'size'"},
      {"alpha = 0.5", "alhpa = 0.5", "s.toml:14:9: policy 'dt': key 'alhpa'"},
      {"queues = 2", "queues = 2\ninterface = \"x\"", "[switches.ports] key 'interface': set by"},
      {"load = 0.5", "load = 1.5", "s.toml:22:8: [workload.websearch] key 'load'"},
      {"fan_in = 4", "fan_in = 5", "key 'fan_in': responders = \"one-leaf\" takes them from one"},
      {"size = \"50%\"", "size = \"fifty\"", "[workload.incast] key 'size'"},
      {"duration = \"10ms\"", "duraton = \"10ms\"", "key 'duration' is required"},
      {"[run]", "[run]\nspeed = 3", "[run]: unknown key 'speed'"},
  };
  for (const Case& c : cases) {
    std::string text = kFabric;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    const std::string e = error(text);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "for '" << c.to << "' got: " << e;
  }
}

TEST_F(ScenarioFile, OverrideMistakesNameTheOverride) {
  EXPECT_NE(error(kFabric, {"workload.websearch.load=2"}).find("--set workload.websearch.load"),
            std::string::npos);
  EXPECT_NE(error(kFabric, {"no-equals-sign"}).find("expected section.key=value"),
            std::string::npos);
  EXPECT_NE(error(kFabric, {"run.duration.x=1"}).find("'duration' is not a table"),
            std::string::npos);
}

TEST_F(ScenarioFile, StarKeysAndFabricKeysDoNotMix) {
  const std::string star = R"([topology]
kind = "star"
hosts = 4
spines = 2
[switches.buffer]
size = "100 cells"
[[workload.flows]]
from = 1
to = 0
[run]
duration = "1ms"
)";
  EXPECT_NE(error(star).find("key 'spines': is for kind = \"leaf-spine\""), std::string::npos);
  std::string seeded = star;
  seeded.replace(seeded.find("spines = 2"), 10, "ecmp_seed = 3");
  EXPECT_NE(error(seeded).find("key 'ecmp_seed': is for kind = \"leaf-spine\""), std::string::npos);
  std::string ok = star;
  ok.replace(ok.find("spines = 2\n"), 11, "");
  const Scenario s = load_scenario(write(ok), {});
  ASSERT_EQ(s.switches.size(), 1u);
  EXPECT_EQ(s.switches[0].name, "switch");
  ASSERT_EQ(s.flows.size(), 1u);
  EXPECT_EQ(s.flows[0].from, std::vector<uint32_t>{1});
  EXPECT_NE(error(ok + "[workload.incast]\nrate = 1\nfan_in = 2\nsize = 1000\nresponders = "
                       "\"one-leaf\"\n")
                .find("\"one-leaf\" needs a leaf-spine fabric"),
            std::string::npos);
  std::string self = ok;
  self.replace(self.find("from = 1"), 8, "from = 0");
  EXPECT_NE(error(self).find("would send to itself"), std::string::npos);
}

// Trimming is modelled (tests/sim/ns3_trim_agreement.sh): a class that trims is read like any.
TEST_F(ScenarioFile, ATrimmingClassIsRead) {
  const std::string with_class =
      std::string(kFabric) + "[[switches.classes]]\nname = \"data\"\nqueue = 1\noverflow = ";
  EXPECT_EQ(error(with_class + "\"trim\"\n"), "");
  EXPECT_EQ(error(with_class + "\"return-to-sender\"\n"), "");
}

// It does not carry probes on its links: [buffer] probe_bytes is refused, not ignored.
TEST_F(ScenarioFile, ChargedProbesAreRefused) {
  std::string text = kFabric;
  text.replace(text.find("size = \"1MB\""), 12, "size = \"1MB\"\nprobe_bytes = 34");
  EXPECT_NE(error(text).find("probe_bytes"), std::string::npos) << error(text);
  EXPECT_EQ(error(kFabric), "");
}

TEST_F(ScenarioFile, APolicyParameterErrorNamesItsLine) {
  std::string text = kFabric;
  text.replace(text.find("alpha = 0.5"), 11, "alpha = -3");
  const std::string e = error(text);
  EXPECT_NE(e.find("s.toml:14"), std::string::npos) << e;
  EXPECT_NE(e.find("alpha"), std::string::npos) << e;
}

TEST_F(ScenarioFile, AFileThatIsNotThereIsAClearError) {
  try {
    load_scenario((dir_ / "missing.toml").string(), {});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.toml"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sharebuf::sim

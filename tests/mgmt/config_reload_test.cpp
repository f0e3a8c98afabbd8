// Reloading the configuration (SIGHUP, config.reload): a broken file changes nothing; the live
// parts (policy, view, trimming, rates, log level, stats file) are applied; every other key that
// differs is named as taking a restart and keeps its running value; the command line's options
// stay over the file.
#include "mgmt/config_reload.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/mgmt/control_fixture.h"

namespace sharebuf::mgmt {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Reload : ::testing::Test {
  testing::ControlFixture f;
  std::string path = (std::filesystem::temp_directory_path() /
                      ("sharebuf-reload-" + std::to_string(getpid()) + ".toml"))
                         .string();
  void SetUp() override { f.ctx.config_path = path; }
  void TearDown() override { std::filesystem::remove(path); }
  // The fixture's configuration with `from` replaced by `to`, written to the reload's file.
  ReloadReport reload(const std::string& from = "", const std::string& to = "") {
    std::string text = testing::kControlConfig;
    if (!from.empty()) {
      const size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    std::ofstream(path) << text;
    return reload_config(f.ctx);
  }
};

TEST_F(Reload, TheSameFileChangesNothing) {
  const ReloadReport r = reload();
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.applied, IsEmpty());
  EXPECT_THAT(r.restart, IsEmpty());
}

TEST_F(Reload, ABrokenFileChangesNothingAndSaysWhy) {
  const std::string before = effective_config_toml(f.ctx);
  ReloadReport r = reload("alpha = 1.0", "alpha = -3");
  EXPECT_THAT(r.error, HasSubstr("alpha"));
  EXPECT_THAT(r.applied, IsEmpty());
  EXPECT_EQ(f.core->policy().params()["alpha"], 1.0);
  EXPECT_EQ(effective_config_toml(f.ctx), before);
  r = reload("[policy]", "[policy\n");
  EXPECT_THAT(r.error, HasSubstr(path));
  std::filesystem::remove(path);
  EXPECT_THAT(reload_config(f.ctx).error, HasSubstr("reload"));
  EXPECT_EQ(effective_config_toml(f.ctx), before);
}

TEST_F(Reload, APolicyAndItsParametersAreAppliedLive) {
  ReloadReport r = reload("alpha = 1.0", "alpha = 2.0");
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.applied, ElementsAre(HasSubstr("alpha 1.0 -> 2.0")));
  EXPECT_EQ(f.core->policy().params()["alpha"], 2.0);
  r = reload("name = \"dt\"\nalpha = 1.0", "name = \"abm\"");
  EXPECT_THAT(r.applied, ElementsAre("policy dt -> abm"));
  EXPECT_EQ(f.core->policy().name(), "abm");
  EXPECT_THAT(effective_config_toml(f.ctx), HasSubstr("name = 'abm'"));
}

TEST_F(Reload, ThePortRateIsAppliedAndThePolicyRebuiltOnIt) {
  const policies::Policy* before = &f.core->policy();
  const ReloadReport r = reload("rate = \"1Gbit\"", "rate = \"500Mbit\"");
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.applied, ElementsAre("port pa rate 1000000000 bit/s -> 500000000 bit/s",
                                     HasSubstr("rebuilt on the new rates")));
  EXPECT_EQ(f.core->ports[0]->line_rate_bps.load(), 500'000'000u);
  EXPECT_EQ(f.core->switch_model.env().port_rate_bps[0], 500'000'000u);
  EXPECT_NE(&f.core->policy(), before);
  EXPECT_THAT(effective_config_toml(f.ctx), HasSubstr("rate = '500Mbit'"));
}

TEST_F(Reload, TheViewAndTrimmingAreAppliedLive) {
  const ReloadReport r =
      reload("cell_bytes = 80\n",
             "cell_bytes = 80\nview = \"probe\"\nprobe_interval = \"2us\"\n[trimming]\n"
             "trim_size = 200\n");
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.applied, Contains(HasSubstr("trim_size 128 -> 200")));
  EXPECT_THAT(r.applied, Contains(HasSubstr("view exact -> probe")));
  EXPECT_THAT(r.restart, IsEmpty());
  EXPECT_EQ(f.core->switch_model.trim().size.load(), 200u);
  EXPECT_EQ(f.ctx.sw.view().mode, buffer::ViewMode::kProbe);
  EXPECT_EQ(f.ctx.sw.view().probe_interval_ns, 2000u);
}

// A key that takes a restart is named, and the effective configuration keeps what runs; the live
// change in the same file is applied.
TEST_F(Reload, KeysThatTakeARestartAreNamedAndKeepTheirRunningValues) {
  const std::string text = testing::kControlConfig;
  std::string next = text;
  next.replace(next.find("4000 cells"), 10, "8000 cells");
  next.replace(next.find("alpha = 1.0"), 11, "alpha = 4.0");
  next += "[[ports]]\ninterface = \"pc\"\n";
  std::ofstream(path) << next;
  const ReloadReport r = reload_config(f.ctx);
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.restart, ElementsAre("[buffer] size", "[[ports]] #3"));
  EXPECT_THAT(r.applied, ElementsAre(HasSubstr("alpha 1.0 -> 4.0")));
  EXPECT_THAT(r.summary(path), HasSubstr("NOT applied (they take a restart): [buffer] size"));
  const std::string now = effective_config_toml(f.ctx);
  EXPECT_THAT(now, HasSubstr("4000 cells"));
  EXPECT_THAT(now, ::testing::Not(HasSubstr("pc")));
  EXPECT_THAT(now, HasSubstr("alpha = 4.0"));
}

// The [metrics] listener is bound at start: a new or changed address waits for a restart.
TEST_F(Reload, AMetricsAddressTakesARestart) {
  std::ofstream(path) << testing::kControlConfig << "[metrics]\nlisten = \"127.0.0.1:9100\"\n";
  const ReloadReport r = reload_config(f.ctx);
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.restart, ElementsAre(HasSubstr("metrics")));
  EXPECT_THAT(effective_config_toml(f.ctx), ::testing::Not(HasSubstr("9100")));
}

TEST_F(Reload, TheCommandLineStaysOverTheFile) {
  f.ctx.overrides.log_level = "warn";
  f.ctx.config.log_level = "warn";
  const ReloadReport r = reload("[switch]", "[log]\nlevel = \"debug\"\n[switch]");
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.kept, ElementsAre("--log-level warn over [log] level 'debug'"));
  EXPECT_THAT(r.applied, IsEmpty());
  EXPECT_EQ(f.ctx.config.log_level, "warn");
}

TEST_F(Reload, TheStatsFileFollowsAndTheHookHearsOfIt) {
  std::string seen;
  f.ctx.on_reload = [&](const DaemonConfig& c) { seen = c.stats_file; };
  const ReloadReport r =
      reload("name = \"ctl-test\"", "name = \"ctl-test\"\nstats_file = \"/x.json\"");
  EXPECT_THAT(r.applied, ElementsAre("stats file '' -> '/x.json'"));
  EXPECT_EQ(seen, "/x.json");
}

TEST_F(Reload, TheControlCommandReportsAndRefuses) {
  std::ofstream(path) << std::string(testing::kControlConfig) + "[oops]\n";
  nlohmann::json reply = handle_request(f.ctx, R"({"cmd":"config.reload"})");
  EXPECT_EQ(reply["ok"], false);
  EXPECT_THAT(reply["error"].get<std::string>(), HasSubstr("oops"));
  std::ofstream(path) << testing::kControlConfig;
  reply = handle_request(f.ctx, R"({"cmd":"config.reload"})");
  EXPECT_EQ(reply["ok"], true) << reply.dump();
  EXPECT_EQ(reply["result"]["restart_needed"], nlohmann::json::array());
}

// config.set (sharebufctl set): the overrides of sharebufd --set over the running configuration,
// applied live; a key that takes a restart changes nothing.
TEST_F(Reload, ConfigSetAppliesOverridesLiveAndRefusesRestartKeys) {
  ReloadReport r = set_config(f.ctx, {"policy.alpha=3", "ports.pa.rate=250Mbit"});
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.applied, Contains(HasSubstr("alpha 1.0 -> 3")));
  EXPECT_EQ(f.core->ports[0]->line_rate_bps.load(), 250'000'000u);
  EXPECT_THAT(effective_config_toml(f.ctx), HasSubstr("rate = '250Mbit'"));
  r = set_config(f.ctx, {"buffer.size=9000", "policy.alpha=5"});
  EXPECT_THAT(r.error, HasSubstr("take a restart, nothing was changed: [buffer] size"));
  EXPECT_EQ(f.core->policy().params()["alpha"], 3);
  r = set_config(f.ctx, {"ports.nope.rate=1Gbit"});
  EXPECT_THAT(r.error, HasSubstr("no entry 'nope' in [[ports]]"));
  const nlohmann::json reply =
      handle_request(f.ctx, R"({"cmd":"config.set","args":{"set":["buffer.view=probe"]}})");
  EXPECT_EQ(reply["ok"], true) << reply.dump();
  EXPECT_EQ(f.ctx.sw.view().mode, buffer::ViewMode::kProbe);
}

// sharebufd --set: over the file at start, and again over it on every reload.
TEST_F(Reload, TheCommandLinesSetsStayOverTheFileOnReload) {
  f.ctx.overrides.sets = {"policy.alpha=4"};
  const ReloadReport r = reload("alpha = 1.0", "alpha = 2.0");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(f.core->policy().params()["alpha"], 4);
  EXPECT_THAT(r.kept, Contains("--set policy.alpha=4"));
}

TEST(TomlDifferences, NamesEachKeyThatDiffers) {
  EXPECT_THAT(toml_differences("a = 1\n[t]\nx = 1\ny = 2\n", "a = 1\n[t]\nx = 1\ny = 3\nz = 4\n"),
              ElementsAre("[t] y", "[t] z"));
  EXPECT_THAT(toml_differences("[[p]]\nn = 1\n[[p]]\nn = 2\n", "[[p]]\nn = 1\n[[p]]\nn = 5\n"),
              ElementsAre("[[p]] #2 n"));
  EXPECT_THAT(toml_differences("[t.u]\nk = 'a'\n", "[t.u]\nk = 'b'\n"), ElementsAre("[t] u.k"));
  EXPECT_THAT(toml_differences("k = 1\n", "k = 1\n"), IsEmpty());
}

}  // namespace
}  // namespace sharebuf::mgmt

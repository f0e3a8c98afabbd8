#include "policies/registry.h"

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "buffer/buffer_state.h"

namespace sharebuf::policies {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const buffer::BufferLayout kLayout(1000, 80, {buffer::PortSpec{.num_queues = 4}});

TEST(Registry, NamesAreUniqueAndFindable) {
  std::set<std::string_view> names;
  for (const PolicyInfo& p : builtin_policies()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_EQ(find_policy(p.name), &p);
    EXPECT_FALSE(p.summary.empty());
  }
  for (std::string_view required : {"cs", "static", "dt"}) {
    EXPECT_TRUE(names.contains(required)) << required;
  }
  EXPECT_EQ(find_policy("nope"), nullptr);
}

TEST(Registry, UnknownPolicyListsTheKnownOnes) {
  EXPECT_THAT([] { make_policy("dtt", Params{}, PolicyEnv{.layout = &kLayout}); },
              ThrowsMessage<ConfigError>(
                  AllOf(HasSubstr("unknown policy 'dtt'"), HasSubstr("cs, static, dt"))));
}

// Every built-in builds with defaults, and its params() feed back into an equal policy.
TEST(Registry, EveryPolicyRoundTripsItsParams) {
  const PolicyEnv env{.layout = &kLayout};
  buffer::BufferState state(kLayout);
  const auto view = buffer::BufferView::exact(state);
  for (const PolicyInfo& info : builtin_policies()) {
    auto policy = make_policy(info.name, Params{}, env);
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(policy->name(), info.name);
    Params again;
    again.values = policy->params();
    auto rebuilt = make_policy(info.name, again, env);
    EXPECT_EQ(rebuilt->params(), policy->params()) << info.name;
    const auto d = policy->describe(view);
    EXPECT_EQ(d["name"], info.name);
    EXPECT_EQ(d["params"], policy->params());
    EXPECT_EQ(d["state"]["thresholds_cells"].size(), kLayout.num_queues()) << info.name;
    // Every declared parameter is accepted by the policy (defaults are what params() reports).
    for (const ParamSpec& spec : info.params) {
      EXPECT_TRUE(policy->params().contains(spec.name)) << info.name << "." << spec.name;
    }
  }
}

// The parameter table of docs/policies.md is the declared tables, as params_markdown() prints
// them: a default or range changed in a kParams table and not in the page fails here.
std::string read_page(const std::string& relative) {
  std::ifstream in(SHAREBUF_SOURCE_DIR "/" + relative);
  std::stringstream page;
  page << in.rdbuf();
  return in ? page.str() : std::string();
}

// The text between <!-- TAG:begin --> and <!-- TAG:end -->, or nullopt without both markers.
std::optional<std::string> section(const std::string& text, const std::string& tag) {
  const std::string begin = "<!-- " + tag + ":begin -->\n", end = "<!-- " + tag + ":end -->";
  const size_t b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return std::nullopt;
  return text.substr(b + begin.size(), e - b - begin.size());
}

TEST(Registry, DocsParameterTableIsTheDeclaredTables) {
  const std::string text = read_page("docs/policies.md");
  ASSERT_FALSE(text.empty()) << "docs/policies.md not found";
  EXPECT_EQ(section(text, "params"), params_markdown())
      << "regenerate: build/sim/sharebuf-replay --params-markdown | "
         "scripts/doc_section.py params -";
}

// Every registered policy has its page, docs/policies/NAME.md, with the sections every page
// gives and its parameter table as the declared table (a new policy without a page fails here).
TEST(Registry, EveryPolicyHasItsPage) {
  for (const PolicyInfo& info : builtin_policies()) {
    const std::string name(info.name);
    const std::string page = read_page("docs/policies/" + name + ".md");
    ASSERT_FALSE(page.empty()) << "docs/policies/" << name << ".md not found";
    for (const char* heading :
         {"## Rule\n", "## Parameters\n", "## What it needs from the switch\n",
          "## Validated here\n", "## Differences from the paper\n", "## Run it\n"})
      EXPECT_NE(page.find(heading), std::string::npos) << name << ".md lacks " << heading;
    EXPECT_EQ(section(page, "params-" + name), params_markdown(name))
        << "regenerate: build/sim/sharebuf-replay --params-markdown-of " << name
        << " | scripts/doc_section.py params-" << name << " -";
  }
}

}  // namespace
}  // namespace sharebuf::policies

#include "policies/registry.h"

#include <fstream>
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
TEST(Registry, DocsParameterTableIsTheDeclaredTables) {
  std::ifstream in(SHAREBUF_SOURCE_DIR "/docs/policies.md");
  ASSERT_TRUE(in) << "docs/policies.md not found";
  std::stringstream page;
  page << in.rdbuf();
  const std::string text = page.str();
  const std::string begin = "<!-- params:begin -->\n", end = "<!-- params:end -->";
  const size_t b = text.find(begin), e = text.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(text.substr(b + begin.size(), e - b - begin.size()), params_markdown())
      << "regenerate: build/sim/sharebuf-replay --params-markdown | "
         "netns-scripts/lib/doc_section.py params -";
}

}  // namespace
}  // namespace sharebuf::policies

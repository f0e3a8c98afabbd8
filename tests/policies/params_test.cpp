#include "policies/params.h"

#include <array>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sharebuf::policies {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr std::array<ParamSpec, 6> kSpecs{{
    {"alpha", ParamType::kNumber, "1", "", 0, 10},
    {"period_ns", ParamType::kInteger, "1000", "", 1, 1'000'000},
    {"enabled", ParamType::kBool, "true", ""},
    {"mode", ParamType::kString, "share", "", 0, 0, "share,measured"},
    {"caps", ParamType::kNumberOrList, "-", "", 0, 10},
    {"path", ParamType::kString, "", ""},
}};

Params table(nlohmann::json values) {
  Params p;
  p.values = std::move(values);
  p.origin = "switch.toml [policy]";
  p.key_origins["alpha"] = "switch.toml:12:1";
  return p;
}

TEST(ParamReader, ReadsTypedValuesAndDefaults) {
  const Params p = table({{"alpha", 0.5}, {"enabled", false}, {"caps", {1, 2}}});
  ParamReader r("x", p, kSpecs);
  EXPECT_EQ(r.number("alpha"), 0.5);
  EXPECT_EQ(r.integer("period_ns"), 1000u);  // the declared default
  EXPECT_FALSE(r.boolean("enabled"));
  EXPECT_EQ(r.choice("mode"), "share");
  EXPECT_EQ(r.number_or_list("caps"), (std::vector<double>{1, 2}));
  EXPECT_EQ(r.text("path"), std::nullopt);
  // What it handed out, defaults included, is the policy's params(); absent optional keys are
  // left out.
  EXPECT_EQ(r.values(), (nlohmann::json{{"alpha", 0.5},
                                        {"period_ns", 1000},
                                        {"enabled", false},
                                        {"mode", "share"},
                                        {"caps", {1, 2}}}));
}

TEST(ParamReader, ReadingAnUndeclaredKeyOrTypeIsAProgrammingError) {
  const Params p = table(nlohmann::json::object());
  ParamReader r("x", p, kSpecs);
  EXPECT_THROW(r.number("beta"), std::logic_error);
  EXPECT_THROW(r.integer("alpha"), std::logic_error);  // declared, but as a number
}

TEST(ParamSpec, RangeTextIsWhatTheDocumentationShows) {
  EXPECT_EQ(range_text({"a", ParamType::kNumber, "1", "", 1.0 / 1024, 1024}), "1/1024 – 1024");
  EXPECT_EQ(range_text({"b", ParamType::kNumber, "0.5", "", 0, 1}), "0 – 1");
  EXPECT_EQ(range_text(kSpecs[3]), "share, measured");
  EXPECT_EQ(range_text(kSpecs[2]), "true, false");
}

TEST(ParamReader, UnknownKeyNamesTheKeyAndTheKnownOnes) {
  const Params p = table({{"alhpa", 1}});
  EXPECT_THAT([&] { ParamReader r("dt", p, kSpecs); },
              ThrowsMessage<ConfigError>(AllOf(HasSubstr("switch.toml [policy]"),
                                               HasSubstr("policy 'dt'"), HasSubstr("'alhpa'"),
                                               HasSubstr("known keys: alpha, period_ns"))));
}

TEST(ParamReader, WrongTypeAndRangeNameTheKeyAndItsLine) {
  {
    const Params p = table({{"alpha", "big"}});
    ParamReader r("dt", p, kSpecs);
    EXPECT_THAT(
        [&] { r.number("alpha"); },
        ThrowsMessage<ConfigError>(AllOf(HasSubstr("switch.toml:12:1"), HasSubstr("key 'alpha'"),
                                         HasSubstr("must be a number"))));
  }
  {
    const Params p = table({{"alpha", 11}});
    ParamReader r("dt", p, kSpecs);
    EXPECT_THAT([&] { r.number("alpha"); },
                ThrowsMessage<ConfigError>(HasSubstr("between 0 and 10, got 11")));
  }
  {
    const Params p = table({{"period_ns", -3}});
    ParamReader r("x", p, kSpecs);
    EXPECT_THAT([&] { r.integer("period_ns"); },
                ThrowsMessage<ConfigError>(HasSubstr("non-negative integer")));
  }
  {
    const Params p = table({{"period_ns", 1.5}});
    ParamReader r("x", p, kSpecs);
    EXPECT_THROW(r.integer("period_ns"), ConfigError);
  }
  {
    const Params p = table({{"enabled", 1}});
    ParamReader r("x", p, kSpecs);
    EXPECT_THAT([&] { r.boolean("enabled"); },
                ThrowsMessage<ConfigError>(HasSubstr("true or false")));
  }
  {
    const Params p = table({{"mode", "fast"}});
    ParamReader r("x", p, kSpecs);
    EXPECT_THAT([&] { r.choice("mode"); },
                ThrowsMessage<ConfigError>(HasSubstr(R"(one of "share", "measured")")));
  }
  {
    const Params p = table({{"caps", {1, "x"}}});
    ParamReader r("x", p, kSpecs);
    EXPECT_THAT([&] { r.number_or_list("caps"); },
                ThrowsMessage<ConfigError>(HasSubstr("entry 1 must be a number")));
  }
}

TEST(ParamReader, ParametersMustBeATable) {
  const Params p = table(nlohmann::json::array());
  EXPECT_THAT([&] { ParamReader r("dt", p, kSpecs); },
              ThrowsMessage<ConfigError>(HasSubstr("must be a table")));
}

}  // namespace
}  // namespace sharebuf::policies

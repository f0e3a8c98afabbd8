// [trimming]'s declared keys (model/trim_params.h): the defaults they declare are TrimConfig's,
// what the effective configuration writes reads back equal, and docs/configuration.md's rows are
// the declarations.
#include "model/trim_params.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace sharebuf::model {
namespace {

using policies::ParamReader;
using policies::Params;

bool same(const TrimConfig& a, const TrimConfig& b) {
  return trim_params_json(a) == trim_params_json(b);
}

TEST(TrimParams, DeclaredDefaultsAreTrimConfigs) {
  Params none;
  TrimConfig read;
  read.size = 1;  // every field is overwritten by a default
  read.t0_ns = 1;
  read.meters = MeterVariant::kMirror;
  read_trim_params(ParamReader(ParamReader::Subject{"[trimming]"}, none, kTrimParams), read, false);
  EXPECT_EQ(trim_params_json(read), trim_params_json(TrimConfig{}));
}

TEST(TrimParams, WhatIsWrittenReadsBackEqual) {
  TrimConfig t;
  t.size = 256;
  t.fix_lengths = false;
  t.dscp = 7;
  t.return_dscp = -1;
  t.trim_newest = 0.5;
  t.seed = 9;
  t.header_reserve = 3;
  t.header_full_return = false;
  t.tofino_approx = true;
  t.meters = MeterVariant::kFixed;
  t.meter_burst_bytes = 4096;
  t.line_rate_bps = 10'000'000'000ull;
  t.pessimistic_share = 0.25;
  t.t0_ns = 6'000;
  t.t1_ns = 24'000;
  t.recirc_rate_bps = 100'000'000'000ull;
  t.recirc_queue_bytes = 3000;
  t.recirc_latency_ns = 2'000;
  Params written;
  written.values = trim_params_json(t);
  TrimConfig back;
  read_trim_params(ParamReader(ParamReader::Subject{"[trimming]"}, written, kTrimParams), back,
                   false);
  EXPECT_TRUE(same(back, t)) << trim_params_json(back).dump() << "\n" << written.values.dump();
  EXPECT_FALSE(same(back, TrimConfig{}));
}

// A patch changes the keys it gives and nothing else; a value out of its declared range is
// refused naming the key, before anything changes.
TEST(TrimParams, APatchChangesItsKeysOnly) {
  TrimConfig t;
  Params patch;
  patch.values = {{"trim_size", 200}, {"t1", "30us"}};
  read_trim_params(ParamReader(ParamReader::Subject{"trim.set"}, patch, kTrimParams), t, true);
  TrimConfig expect;
  expect.size = 200;
  expect.t1_ns = 30'000;
  EXPECT_TRUE(same(t, expect));
  patch.values = {{"trim_size", 63}};
  try {
    read_trim_params(ParamReader(ParamReader::Subject{"trim.set"}, patch, kTrimParams), t, true);
    FAIL() << "trim_size 63 was taken";
  } catch (const policies::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("trim.set: key 'trim_size'"), std::string::npos)
        << e.what();
  }
  patch.values = {{"t0", "2s"}};
  EXPECT_THROW(
      read_trim_params(ParamReader(ParamReader::Subject{"trim.set"}, patch, kTrimParams), t, true),
      policies::ConfigError);
  EXPECT_EQ(t.size, 200u);
}

TEST(TrimParams, DocsRowsAreTheDeclarations) {
  std::ifstream in(SHAREBUF_SOURCE_DIR "/docs/configuration.md");
  ASSERT_TRUE(in);
  std::stringstream page;
  page << in.rdbuf();
  const std::string text = page.str();
  const std::string begin = "<!-- trimming:begin -->\n", end = "<!-- trimming:end -->";
  const size_t b = text.find(begin), e = text.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(text.substr(b + begin.size(), e - b - begin.size()), trim_params_markdown())
      << "regenerate: build/mgmt/sharebufd --trimming-markdown | "
         "scripts/doc_section.py trimming -";
}

}  // namespace
}  // namespace sharebuf::model

// The shell's tables (sharebufctl queues, sharebufd --print-stats): every drop a queue has, of any
// reason, is in them, with the real replies of a switch core (tests/mgmt/control_fixture.h) as
// input.
#include "mgmt/text_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "buffer/drop_reason.h"
#include "tests/mgmt/control_fixture.h"

namespace sharebuf::mgmt {
namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

// The cell of `row` under `column` in a rendered table (columns hold no blanks here).
std::string cell(const std::string& table, size_t row, const std::string& column) {
  const auto lines = lines_of(table);
  const auto header = words_of(lines.at(0));
  const auto it = std::find(header.begin(), header.end(), column);
  if (it == header.end()) return "<no column " + column + ">";
  return words_of(lines.at(row + 1)).at(static_cast<size_t>(it - header.begin()));
}

bool has_column(const std::string& table, const std::string& column) {
  const auto header = words_of(lines_of(table).at(0));
  return std::find(header.begin(), header.end(), column) != header.end();
}

void set_drops(buffer::QueueStats& s, buffer::DropReason r, uint64_t n) {
  s.dropped_pkts[static_cast<size_t>(r)] = n;
}

TEST(TextTable, ColumnsAlignAndNoLineEndsInABlank) {
  const std::string t = render_table({"a", "bb", "c"}, {{"xxx", "y", "z"}, {"1", "22", ""}});
  EXPECT_EQ(t, "a    bb  c\nxxx  y   z\n1    22\n");
}

TEST(TextTable, ThresholdAndPoolFullAlwaysOtherReasonsWhenAQueueHasOne) {
  testing::ControlFixture f;
  const json idle = handle_request(f.ctx, R"({"cmd":"queues"})")["result"];
  const std::string quiet = queues_table(idle);
  EXPECT_TRUE(has_column(quiet, "drop:thr"));
  EXPECT_TRUE(has_column(quiet, "drop:full"));
  EXPECT_FALSE(has_column(quiet, "drop:pred"));
  EXPECT_FALSE(has_column(quiet, "drop:meter"));
  EXPECT_FALSE(has_column(quiet, "full:stalled"));
  // In the order of buffer::DropReason, not the reply's (sorted by name).
  EXPECT_EQ(
      words_of(lines_of(quiet).at(0)),
      (std::vector<std::string>{"queue", "occ", "thr", "peak", "admitted", "sent", "queued",
                                "drop:thr", "drop:full", "ecn", "trimmed", "defl", "p50", "p99"}));

  // Frames a meter or a prediction refused were missing from sharebufctl's table before.
  auto& s0 = f.core->buffer().stats(0);
  auto& s1 = f.core->buffer().stats(1);
  set_drops(s0, buffer::DropReason::kMeter, 5);
  set_drops(s1, buffer::DropReason::kPrediction, 7);
  set_drops(s1, buffer::DropReason::kPoolFull, 9);
  s1.stalled_pkts = 4;
  const json busy = handle_request(f.ctx, R"({"cmd":"queues"})")["result"];
  const std::string t = queues_table(busy);
  EXPECT_EQ(cell(t, 0, "drop:meter"), "5");
  EXPECT_EQ(cell(t, 1, "drop:meter"), "0");
  EXPECT_EQ(cell(t, 1, "drop:pred"), "7");
  EXPECT_EQ(cell(t, 1, "drop:full"), "9");
  EXPECT_EQ(cell(t, 1, "full:stalled"), "4");
  EXPECT_FALSE(has_column(t, "drop:unsup"));
  // The stall count sits beside the pool_full drops it is part of.
  const auto header = words_of(lines_of(t).at(0));
  const auto full = std::find(header.begin(), header.end(), "drop:full");
  ASSERT_NE(full + 1, header.end());
  EXPECT_EQ(*(full + 1), "full:stalled");
  s0.reset();
  s1.reset();
}

TEST(TextTable, EveryDropReasonGetsAColumnOnceUsed) {
  testing::ControlFixture f;
  auto& s = f.core->buffer().stats(0);
  for (size_t r = 1; r < buffer::kNumDropReasons; ++r)
    s.dropped_pkts[r] = 10 + r;
  const std::string t = queues_table(handle_request(f.ctx, R"({"cmd":"queues"})")["result"]);
  // One drop column per reason, each with its count: a reason added later shows up too.
  uint64_t shown = 0;
  for (const std::string& w : words_of(lines_of(t).at(0)))
    if (w.rfind("drop:", 0) == 0) shown += std::stoull(cell(t, 0, w));
  uint64_t all = 0;
  for (size_t r = 1; r < buffer::kNumDropReasons; ++r)
    all += 10 + r;
  EXPECT_EQ(shown, all);
  s.reset();
}

TEST(TextTable, CountsHeldSignedShowAsTheyAre) {
  // nlohmann::json keeps an int assigned in C++ as a signed number; it must not read as 0.
  json q = {{"interface", "pa"},
            {"queue", 0},
            {"dropped", {{"threshold", 0}, {"pool_full", 0}, {"meter", 4}}}};
  const DropColumns d = drop_columns({&q});
  ASSERT_EQ(d.header, (TableRow{"drop:thr", "drop:full", "drop:meter"}));
  EXPECT_EQ(d.rows.at(0), (TableRow{"0", "0", "4"}));
}

TEST(TextTable, StatsSummaryAddsUpPerQueue) {
  testing::ControlFixture f;
  auto& s = f.core->buffer().stats(0);
  s.received_pkts = 20;
  s.enqueued_pkts = 12;
  set_drops(s, buffer::DropReason::kThreshold, 3);
  set_drops(s, buffer::DropReason::kPrediction, 5);
  const std::string t = switch_stats_table(f.control->stats());
  const auto lines = lines_of(t);
  // policy line, port header, two ports, queue header, queues.
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0].rfind("policy dt;", 0), 0u) << lines[0];
  std::string queues;
  for (size_t i = 4; i < lines.size(); ++i)
    queues += lines[i] + "\n";
  EXPECT_EQ(cell(queues, 0, "received"), "20");
  EXPECT_EQ(cell(queues, 0, "admitted"), "12");
  EXPECT_EQ(cell(queues, 0, "drop:thr"), "3");
  EXPECT_EQ(cell(queues, 0, "drop:pred"), "5");
  s.reset();
}

}  // namespace
}  // namespace sharebuf::mgmt

// ProbeCharge: probes owed per interval boundary passed while the port was backlogged.
#include "model/probe_charge.h"

#include <gtest/gtest.h>

namespace sharebuf::model {
namespace {

TEST(ProbeCharge, OwesEachBoundaryPassedWhileBacklogged) {
  ProbeCharge c;
  // 1 ms interval, 3 queues x 34 B per boundary (any weight).
  EXPECT_EQ(c.owed_bytes(500'000, 1'000'000, 102, true, 100), 0u);      // no boundary yet
  EXPECT_EQ(c.owed_bytes(1'000'000, 1'000'000, 102, true, 100), 102u);  // boundary 1
  EXPECT_EQ(c.owed_bytes(1'999'999, 1'000'000, 102, true, 100), 0u);    // still boundary 1
  EXPECT_EQ(c.owed_bytes(4'000'000, 1'000'000, 102, true, 100), 306u);  // 2, 3, 4
}

TEST(ProbeCharge, AnIdlePortOwesNothingForItsIdleTime) {
  ProbeCharge c;
  EXPECT_EQ(c.owed_bytes(1'000'000, 1'000'000, 102, true, 100), 102u);
  EXPECT_EQ(c.owed_bytes(50'000'000, 1'000'000, 102, false, 100), 0u);   // 49 boundaries idle
  EXPECT_EQ(c.owed_bytes(51'000'000, 1'000'000, 102, true, 100), 102u);  // only the one since
}

TEST(ProbeCharge, AtMostMaxIntervalsAtOnceAndNothingWhenOff) {
  ProbeCharge c;
  EXPECT_EQ(c.owed_bytes(1'000'000'000, 1'000'000, 102, true, 21), 21u * 102);
  // An older clock (boundary 500 < 1000 already charged) owes nothing and moves nothing back.
  EXPECT_EQ(c.owed_bytes(500'000'000, 1'000'000, 102, true, 21), 0u);
  EXPECT_EQ(c.owed_bytes(1'001'000'000, 1'000'000, 102, true, 21), 102u);
  EXPECT_EQ(c.owed_bytes(2'000'000'000, 1'000'000, 0, true, 21), 0u);
  EXPECT_EQ(c.owed_bytes(3'000'000'000, 0, 102, true, 21), 0u);
}

}  // namespace
}  // namespace sharebuf::model

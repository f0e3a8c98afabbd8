#include "model/mac_table.h"

#include <gtest/gtest.h>

namespace sharebuf::model {
namespace {

constexpr uint64_t kSecond = 1'000'000'000ull;

TEST(MacTable, LearnsLooksUpAndAges) {
  MacTable t(64, 10 * kSecond);
  EXPECT_EQ(t.lookup(0x020000000001, kSecond), MacTable::kNoPort);
  EXPECT_TRUE(t.learn(0x020000000001, 3, kSecond));
  EXPECT_EQ(t.lookup(0x020000000001, 2 * kSecond), 3);
  EXPECT_EQ(t.lookup(0x020000000001, 11 * kSecond), 3);  // exactly at the ageing time
  EXPECT_EQ(t.lookup(0x020000000001, 12 * kSecond), MacTable::kNoPort);  // aged out
  EXPECT_TRUE(t.learn(0x020000000001, 3, 12 * kSecond));                 // seen again
  EXPECT_EQ(t.lookup(0x020000000001, 13 * kSecond), 3);
}

TEST(MacTable, RefreshKeepsAnEntryAlive) {
  MacTable t(64, 10 * kSecond);
  for (uint64_t s = 1; s < 50; s += 5)
    ASSERT_TRUE(t.learn(42, 1, s * kSecond));
  EXPECT_EQ(t.lookup(42, 55 * kSecond), 1);
}

TEST(MacTable, MovesToTheNewPort) {
  MacTable t(64, 10 * kSecond);
  t.learn(7, 1, kSecond);
  t.learn(7, 2, 2 * kSecond);
  EXPECT_EQ(t.lookup(7, 2 * kSecond), 2);
  EXPECT_EQ(t.size_approx(2 * kSecond), 1u);
}

TEST(MacTable, StaticEntriesNeverAgeOrMove) {
  MacTable t(64, kSecond);
  ASSERT_TRUE(t.add_static(9, 4));
  t.learn(9, 1, 5 * kSecond);
  EXPECT_EQ(t.lookup(9, 1000 * kSecond), 4);
}

TEST(MacTable, ManyAddressesAndExpiredSlotsAreReused) {
  MacTable t(100, kSecond);
  for (uint64_t m = 1; m <= 100; ++m)
    ASSERT_TRUE(t.learn(m, static_cast<uint16_t>(m % 7), kSecond));
  for (uint64_t m = 1; m <= 100; ++m)
    EXPECT_EQ(t.lookup(m, kSecond), m % 7);
  // Much later every entry has expired: a new generation of addresses fits.
  for (uint64_t m = 1001; m <= 1100; ++m) {
    ASSERT_TRUE(t.learn(m, 1, 100 * kSecond)) << m;
  }
  for (uint64_t m = 1001; m <= 1100; ++m)
    EXPECT_EQ(t.lookup(m, 100 * kSecond), 1);
  EXPECT_EQ(t.lookup(5, 100 * kSecond), MacTable::kNoPort);
}

TEST(MacAddress, ParseAndFormat) {
  EXPECT_EQ(parse_mac("02:5b:00:00:00:0a"), 0x025b0000000aull);
  EXPECT_EQ(parse_mac("02-5B-00-00-00-0A"), 0x025b0000000aull);
  EXPECT_EQ(parse_mac("02:5b:00:00:00"), std::nullopt);
  EXPECT_EQ(parse_mac("02:5b:00:00:00:0g"), std::nullopt);
  EXPECT_EQ(format_mac(0x025b0000000aull), "02:5b:00:00:00:0a");
}

}  // namespace
}  // namespace sharebuf::model

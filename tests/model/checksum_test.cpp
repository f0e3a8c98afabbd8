#include "model/checksum.h"

#include <gtest/gtest.h>

#include "model/ecn.h"
#include "tests/model/frame_builder.h"

namespace sharebuf::model {
namespace {

// Verifies the one's-complement sum of an IPv4 header including its checksum is 0xffff.
bool ipv4_header_valid(const std::vector<uint8_t>& f, size_t l3) {
  uint32_t sum = 0;
  for (size_t i = 0; i < 20; i += 2)
    sum += static_cast<uint32_t>((f[l3 + i] << 8) | f[l3 + i + 1]);
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

TEST(Ecn, MarkingIpv4KeepsTheHeaderChecksumValid) {
  for (int dscp : {0, 10, 46, 63}) {
    for (int ecn : {1, 2}) {
      auto f = testing::build_frame(
          {.dscp = static_cast<uint8_t>(dscp), .ecn = static_cast<uint8_t>(ecn)});
      ASSERT_TRUE(ipv4_header_valid(f, 14));
      const ParsedFrame p = parse_frame(f);
      ASSERT_TRUE(mark_ce(f, p));
      EXPECT_EQ(f[15] & 3, 3);
      EXPECT_EQ(f[15] >> 2, dscp);
      EXPECT_TRUE(ipv4_header_valid(f, 14)) << "dscp " << int(dscp) << " ecn " << int(ecn);
      // Same result as recomputing from scratch.
      const uint16_t stored = static_cast<uint16_t>((f[24] << 8) | f[25]);
      EXPECT_EQ(stored, ipv4_header_checksum(&f[14], 20));
    }
  }
}

TEST(Ecn, NotEctIsNeverMarked) {
  auto f = testing::build_frame({.ecn = 0});
  EXPECT_FALSE(mark_ce(f, parse_frame(f)));
  EXPECT_EQ(f[15] & 3, 0);
}

TEST(Ecn, Ipv6TrafficClass) {
  auto f = testing::build_frame({.vlan = true, .ipv6 = true, .dscp = 12, .ecn = 2});
  ASSERT_TRUE(mark_ce(f, parse_frame(f)));
  const ParsedFrame p = parse_frame(f);
  EXPECT_EQ(p.ecn, 3);
  EXPECT_EQ(p.dscp, 12);
}

// Undoing a mark gives back the frame as it came, IPv4 (checksum included) and IPv6.
TEST(Ecn, UndoRestoresTheFrame) {
  for (const bool v6 : {false, true}) {
    auto f = testing::build_frame({.vlan = v6, .ipv6 = v6, .dscp = 10, .ecn = 2});
    const auto original = f;
    const ParsedFrame p = parse_frame(f);
    const CeUndo undo = ce_undo(f, p);
    ASSERT_TRUE(mark_ce(f, p));
    ASSERT_NE(f, original);
    undo_ce(f, p, undo);
    EXPECT_EQ(f, original) << (v6 ? "IPv6" : "IPv4");
  }
}

// A frame whose L4 checksum was left partial gets the same checksum as a fully computed one.
TEST(Checksum, CompletesTcpAndUdpOverIpv4AndIpv6) {
  const testing::FrameSpec specs[] = {
      {.proto = 6, .payload = 101}, {.proto = 17, .payload = 64}, {.ipv6 = true, .proto = 6}};
  for (const auto& s : specs) {
    auto f = testing::build_frame(s);
    const ParsedFrame p = parse_frame(f);
    ASSERT_TRUE(complete_l4_checksum(f, p));
    // Verify: the sum over pseudo-header and segment, checksum included, is 0xffff.
    const size_t l4_len = f.size() - p.l4_offset;
    uint64_t sum = 0;
    auto add = [&](const uint8_t* d, size_t n) {
      for (size_t i = 0; i + 1 < n; i += 2)
        sum += static_cast<uint32_t>((d[i] << 8) | d[i + 1]);
      if (n % 2) sum += static_cast<uint32_t>(d[n - 1] << 8);
    };
    if (p.ip_version == 4) {
      add(&f[p.l3_offset + 12], 8);
    } else {
      add(&f[p.l3_offset + 8], 32);
    }
    sum += p.l4_proto + l4_len;
    add(&f[p.l4_offset], l4_len);
    while (sum >> 16)
      sum = (sum & 0xffff) + (sum >> 16);
    EXPECT_EQ(sum, 0xffffu) << "proto " << int(s.proto) << " ipv6 " << s.ipv6;
  }
}

}  // namespace
}  // namespace sharebuf::model

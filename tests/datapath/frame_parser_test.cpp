#include "datapath/frame_parser.h"

#include <gtest/gtest.h>

#include "tests/datapath/frame_builder.h"

namespace sharebuf::datapath {
namespace {

using testing::build_frame;
using testing::FrameSpec;

TEST(FrameParser, Ipv4Udp) {
  const auto f = build_frame({.dscp = 46, .ecn = 2, .src_port = 53, .dst_port = 4000});
  const ParsedFrame p = parse_frame(f);
  ASSERT_TRUE(p.ok()) << to_string(p.error);
  EXPECT_EQ(p.ethertype, kEtherTypeIpv4);
  EXPECT_EQ(p.ip_version, 4);
  EXPECT_EQ(p.dscp, 46);
  EXPECT_TRUE(p.ect());
  EXPECT_EQ(p.l4_proto, kIpProtoUdp);
  EXPECT_EQ(p.src_port, 53);
  EXPECT_EQ(p.dst_port, 4000);
  EXPECT_EQ(p.src_ip4, 0xc6120001u);
  EXPECT_EQ(p.l3_offset, 14);
  EXPECT_EQ(p.l4_offset, 34);
  EXPECT_FALSE(p.dst_is_group());
}

TEST(FrameParser, VlanIpv6Tcp) {
  const auto f = build_frame({.vlan = true, .pcp = 5, .ipv6 = true, .proto = 6, .dscp = 10});
  const ParsedFrame p = parse_frame(f);
  ASSERT_TRUE(p.ok()) << to_string(p.error);
  EXPECT_TRUE(p.has_vlan);
  EXPECT_EQ(p.pcp, 5);
  EXPECT_EQ(p.vlan_id, 10);
  EXPECT_EQ(p.ip_version, 6);
  EXPECT_EQ(p.dscp, 10);
  EXPECT_EQ(p.l4_proto, kIpProtoTcp);
  EXPECT_EQ(p.l3_offset, 18);
  EXPECT_EQ(p.l4_offset, 58);
}

TEST(FrameParser, NonIpIsValidL2) {
  std::vector<uint8_t> arp(42, 0);
  arp[0] = 0xff;
  arp[12] = 0x08;
  arp[13] = 0x06;
  const ParsedFrame p = parse_frame(arp);
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p.ip_version, 0);
  EXPECT_TRUE(p.dst_is_group());
}

struct Broken {
  const char* name;
  ParseError expected;
  std::vector<uint8_t> (*make)();
};

std::vector<uint8_t> with(FrameSpec s, void (*edit)(std::vector<uint8_t>&)) {
  auto f = build_frame(s);
  edit(f);
  return f;
}

const Broken kBroken[] = {
    {"runt", ParseError::kRunt, [] { return std::vector<uint8_t>(13, 0); }},
    {"vlan", ParseError::kVlanTruncated,
     [] { return std::vector<uint8_t>{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x81, 0, 0}; }},
    {"ipv4 short", ParseError::kIpv4Truncated,
     [] { return with({}, [](auto& f) { f.resize(14 + 19); }); }},
    {"ipv4 version", ParseError::kIpv4BadVersion,
     [] { return with({}, [](auto& f) { f[14] = 0x55; }); }},
    {"ihl small", ParseError::kIpv4BadIhl, [] { return with({}, [](auto& f) { f[14] = 0x44; }); }},
    {"ihl past end", ParseError::kIpv4BadIhl,
     [] { return with({.payload = 0}, [](auto& f) { f[14] = 0x4f; }); }},
    {"total past end", ParseError::kIpv4BadLength,
     [] { return with({}, [](auto& f) { testing::put16(f, 16, 1500); }); }},
    {"total below header", ParseError::kIpv4BadLength,
     [] { return with({}, [](auto& f) { testing::put16(f, 16, 10); }); }},
    {"ipv6 short", ParseError::kIpv6Truncated,
     [] { return with({.ipv6 = true}, [](auto& f) { f.resize(14 + 39); }); }},
    {"ipv6 version", ParseError::kIpv6BadVersion,
     [] { return with({.ipv6 = true}, [](auto& f) { f[14] = 0x40; }); }},
    {"ipv6 payload past end", ParseError::kIpv6BadLength,
     [] { return with({.ipv6 = true}, [](auto& f) { testing::put16(f, 18, 9000); }); }},
    {"udp cut", ParseError::kL4Truncated,
     [] {
       return with({.payload = 0}, [](auto& f) {
         f.resize(14 + 20 + 4);
         testing::put16(f, 16, 24);
       });
     }},
    {"tcp offset", ParseError::kTcpBadOffset,
     [] { return with({.proto = 6}, [](auto& f) { f[14 + 20 + 12] = 0x40; }); }},
    {"tcp offset past end", ParseError::kTcpBadOffset,
     [] { return with({.proto = 6, .payload = 0}, [](auto& f) { f[14 + 20 + 12] = 0xf0; }); }},
    {"udp length", ParseError::kUdpBadLength,
     [] { return with({}, [](auto& f) { testing::put16(f, 14 + 20 + 4, 7); }); }},
};

TEST(FrameParser, EveryMalformationHasItsReason) {
  for (const Broken& b : kBroken) {
    const auto f = b.make();
    EXPECT_EQ(parse_frame(f).error, b.expected)
        << b.name << ": got " << to_string(parse_frame(f).error);
  }
}

// Any prefix of any valid frame parses without reading past it (ASan checks the reads): either
// an error, or offsets inside the prefix.
TEST(FrameParser, TruncationsNeverReadPastTheFrame) {
  const FrameSpec specs[] = {
      {}, {.proto = 6}, {.vlan = true}, {.ipv6 = true, .proto = 6}, {.vlan = true, .ipv6 = true}};
  for (const FrameSpec& s : specs) {
    const auto full = build_frame(s);
    for (size_t n = 0; n <= full.size(); ++n) {
      // A heap copy of exactly n bytes, so any over-read is an ASan error.
      const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(n));
      const ParsedFrame p = parse_frame(cut);
      if (p.ok()) {
        EXPECT_LE(p.l3_offset, n);
        EXPECT_LE(p.l4_offset, n);
      }
    }
    EXPECT_TRUE(parse_frame(full).ok());
  }
}

TEST(FrameParser, FlowHashSeparatesFlowsAndIgnoresNonIp) {
  const auto a = build_frame({.src_port = 1000, .dst_port = 80});
  const auto b = build_frame({.src_port = 1001, .dst_port = 80});
  EXPECT_NE(flow_hash(parse_frame(a)), 0u);
  EXPECT_EQ(flow_hash(parse_frame(a)), flow_hash(parse_frame(a)));
  EXPECT_NE(flow_hash(parse_frame(a)), flow_hash(parse_frame(b)));
  std::vector<uint8_t> arp(42, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(flow_hash(parse_frame(arp)), 0u);
}

TEST(FrameParser, ReasonNamesAreStable) {
  EXPECT_EQ(to_string(ParseError::kIpv4BadIhl), "ipv4_bad_ihl");
  EXPECT_EQ(to_string(ParseError::kUdpBadLength), "udp_bad_length");
  EXPECT_EQ(kParseErrorNames.size(), kNumParseErrors);
}

}  // namespace
}  // namespace sharebuf::datapath

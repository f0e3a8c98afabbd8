#include "model/frame_parser.h"

#include <gtest/gtest.h>

#include "tests/model/frame_builder.h"

namespace sharebuf::model {
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

// IPv6 extension headers are walked to the L4 header: hop-by-hop (8 B), destination options
// (16 B), a first fragment, AH (its length in 4-byte units).
TEST(FrameParser, Ipv6ExtensionHeadersLeadToTheL4Header) {
  auto dest_opts = testing::hop_by_hop(1);
  dest_opts.type = 60;
  const testing::Ipv6Ext ah{51, std::vector<uint8_t>{0, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0, 7,
                                                     9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}};
  const auto f = testing::with_ipv6_ext(
      build_frame({.ipv6 = true, .proto = 6, .src_port = 7}), 14,
      {testing::hop_by_hop(), dest_opts, testing::fragment_header(0, true), ah});
  const ParsedFrame p = parse_frame(f);
  ASSERT_TRUE(p.ok()) << to_string(p.error);
  EXPECT_EQ(p.l4_proto, kIpProtoTcp);
  EXPECT_EQ(p.l3_end, 14 + 40 + 8 + 16 + 8 + 24);
  EXPECT_EQ(p.l4_offset, p.l3_end);
  EXPECT_EQ(p.src_port, 7);
  EXPECT_TRUE(p.fragmented);    // the first fragment: its L4 header is here...
  EXPECT_FALSE(p.is_fragment);  // ...so it is not a non-first one
  EXPECT_FALSE(p.routed);
}

TEST(FrameParser, Ipv6FragmentsAndRoutingHeaders) {
  const auto later = testing::with_ipv6_ext(build_frame({.ipv6 = true}), 14,
                                            {testing::fragment_header(100, false)});
  ParsedFrame p = parse_frame(later);
  ASSERT_TRUE(p.ok()) << to_string(p.error);
  EXPECT_TRUE(p.is_fragment);
  EXPECT_TRUE(p.fragmented);
  EXPECT_EQ(p.l4_offset, 0);  // no L4 header in a later fragment
  const auto routed =
      testing::with_ipv6_ext(build_frame({.ipv6 = true}), 14, {testing::routing_header(1)});
  p = parse_frame(routed);
  ASSERT_TRUE(p.ok()) << to_string(p.error);
  EXPECT_TRUE(p.routed);
  EXPECT_EQ(p.l4_offset, 14 + 40 + 24);
  EXPECT_FALSE(parse_frame(testing::with_ipv6_ext(build_frame({.ipv6 = true}), 14,
                                                  {testing::routing_header(0)}))
                   .routed);
  // ESP ends the walk: what follows is encrypted.
  auto esp = build_frame({.ipv6 = true});
  esp[14 + 6] = 50;
  p = parse_frame(esp);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.l4_proto, 50);
  EXPECT_EQ(p.l4_offset, 0);
  EXPECT_EQ(p.l3_end, 14 + 40);
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
    {"ipv6 ext past payload", ParseError::kIpv6BadExtHeader,
     [] {
       auto f = testing::with_ipv6_ext(build_frame({.ipv6 = true, .payload = 0}), 14,
                                       {testing::hop_by_hop()});
       f[14 + 40 + 1] = 5;  // 48 bytes claimed, 16 in the payload
       return f;
     }},
    {"ipv6 too many ext", ParseError::kIpv6BadExtHeader,
     [] {
       return testing::with_ipv6_ext(
           build_frame({.ipv6 = true}), 14,
           std::vector<testing::Ipv6Ext>(kMaxIpv6ExtHeaders + 1, testing::hop_by_hop()));
     }},
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
  // And through IPv6 extension headers.
  const auto full = testing::with_ipv6_ext(build_frame({.ipv6 = true, .proto = 6}), 14,
                                           {testing::hop_by_hop(1), testing::routing_header(1)});
  ASSERT_TRUE(parse_frame(full).ok());
  for (size_t n = 0; n <= full.size(); ++n) {
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(n));
    const ParsedFrame p = parse_frame(cut);
    if (p.ok()) {
      EXPECT_LE(p.l3_end, n);
      EXPECT_LE(p.l4_offset, n);
    }
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
  EXPECT_EQ(to_string(ParseError::kIpv6BadExtHeader), "ipv6_bad_ext_header");
  EXPECT_EQ(kParseErrorNames.size(), kNumParseErrors);
}

}  // namespace
}  // namespace sharebuf::model

// Trimming's cut: IPv4 and IPv6, TCP and UDP, with IP and TCP options, VLAN-tagged; short frames
// left whole; lengths and checksums checked by an implementation of the test's own (a word sum
// with the carry folded at every step, not the datapath's deferred fold).
#include "model/frame_trim.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/model/frame_builder.h"

namespace sharebuf::model {
namespace {

using Frame = std::vector<uint8_t>;

uint16_t rd16(const Frame& f, size_t at) {
  return static_cast<uint16_t>((f[at] << 8) | f[at + 1]);
}

// One's-complement sum, folding the carry after every addition.
uint32_t add(uint32_t sum, uint32_t word) {
  sum += word;
  return (sum & 0xffff) + (sum >> 16);
}
uint32_t sum_range(uint32_t sum, const Frame& f, size_t from, size_t len) {
  for (size_t i = 0; i + 1 < len; i += 2)
    sum = add(sum, rd16(f, from + i));
  if (len % 2) sum = add(sum, static_cast<uint32_t>(f[from + len - 1]) << 8);
  return sum;
}

bool ipv4_header_ok(const Frame& f, size_t l3) {
  return sum_range(0, f, l3, (f[l3] & 0x0f) * 4u) == 0xffff;
}

// The TCP/UDP checksum verifies over the pseudo-header and the segment the IP header declares.
bool l4_checksum_ok(const Frame& f, size_t l3, size_t l4, bool ipv6, uint8_t proto) {
  uint32_t sum = 0;
  size_t seg;
  if (ipv6) {
    sum = sum_range(sum, f, l3 + 8, 32);
    seg = rd16(f, l3 + 4) + 40 - (l4 - l3);  // the payload length counts extension headers
  } else {
    sum = sum_range(sum, f, l3 + 12, 8);
    seg = rd16(f, l3 + 2) - (l4 - l3);
  }
  sum = add(sum, proto);
  sum = add(sum, static_cast<uint32_t>(seg));
  if (l4 + seg > f.size()) return false;
  return sum_range(sum, f, l4, seg) == 0xffff;
}

// Rewrites a built IPv4/TCP frame with 4 bytes of IP options and 12 bytes of TCP options, with
// its checksums made valid by the datapath's routine (checked here independently).
Frame with_options(Frame f) {
  const size_t l3 = 14;
  f.insert(f.begin() + l3 + 20, {1, 1, 1, 0});  // NOP NOP NOP EOL
  f[l3] = 0x46;
  const size_t l4 = l3 + 24;
  f.insert(f.begin() + static_cast<long>(l4) + 20, 12, uint8_t{1});  // 12 NOPs
  f[l4 + 12] = 0x80;
  testing::put16(f, l3 + 2, static_cast<uint16_t>(f.size() - l3));
  testing::put16(f, l3 + 10, 0);
  testing::put16(f, l3 + 10, ipv4_header_checksum(&f[l3], 24));
  complete_l4_checksum(f, parse_frame(f));
  return f;
}

TEST(FrameTrim, CutsEachKindToTheSizeWithValidLengthsAndChecksums) {
  struct Case {
    testing::FrameSpec spec;
    size_t l3, l4;
  };
  const Case cases[] = {
      {{.proto = 6, .payload = 1000}, 14, 34},
      {{.proto = 17, .payload = 1000}, 14, 34},
      {{.ipv6 = true, .proto = 6, .payload = 1000}, 14, 54},
      {{.ipv6 = true, .proto = 17, .payload = 1000}, 14, 54},
      {{.vlan = true, .proto = 6, .payload = 1000}, 18, 38},
      {{.vlan = true, .ipv6 = true, .proto = 17, .payload = 1000}, 18, 58},
  };
  for (const Case& c : cases) {
    Frame f = testing::build_frame(c.spec);
    complete_l4_checksum(f, parse_frame(f));  // the builder leaves L4 checksums at 0
    ASSERT_TRUE(l4_checksum_ok(f, c.l3, c.l4, c.spec.ipv6, c.spec.proto));
    const ParsedFrame p = parse_frame(f);
    ASSERT_TRUE(p.ok());
    const size_t n = trim_frame(f, p, {.size = 128});
    ASSERT_EQ(n, 128u) << "proto " << int(c.spec.proto) << " ipv6 " << c.spec.ipv6;
    f.resize(n);
    if (c.spec.ipv6) {
      EXPECT_EQ(rd16(f, c.l3 + 4), 128 - c.l3 - 40);
    } else {
      EXPECT_EQ(rd16(f, c.l3 + 2), 128 - c.l3);
      EXPECT_TRUE(ipv4_header_ok(f, c.l3));
    }
    if (c.spec.proto == 17) {
      EXPECT_EQ(rd16(f, c.l4 + 4), 128 - c.l4);
    }
    EXPECT_TRUE(l4_checksum_ok(f, c.l3, c.l4, c.spec.ipv6, c.spec.proto));
    // The cut copy parses as a whole packet again.
    EXPECT_TRUE(parse_frame(f).ok());
    // The headers and the first payload bytes are what they were.
    const Frame original = testing::build_frame(c.spec);
    EXPECT_EQ(f[c.l4], original[c.l4]);
    EXPECT_EQ(f[127], original[127]);
  }
}

TEST(FrameTrim, NeverCutsIntoTheHeadersOptionsIncluded) {
  Frame f = with_options(testing::build_frame({.proto = 6, .payload = 500}));
  ASSERT_TRUE(ipv4_header_ok(f, 14));
  ASSERT_TRUE(l4_checksum_ok(f, 14, 38, false, 6));
  const ParsedFrame p = parse_frame(f);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(trim_floor(f, p), 14u + 24 + 32);
  const size_t n = trim_frame(f, p, {.size = 64});  // below the 70 header bytes
  ASSERT_EQ(n, 70u);
  f.resize(n);
  EXPECT_TRUE(ipv4_header_ok(f, 14));
  EXPECT_TRUE(l4_checksum_ok(f, 14, 38, false, 6));
  EXPECT_EQ(rd16(f, 16), 70 - 14);
}

TEST(FrameTrim, AFrameNoLongerThanTheSizeIsLeftWholeButStillGetsTheDscp) {
  Frame f = testing::build_frame({.proto = 17, .dscp = 10, .ecn = 2, .payload = 40});
  const Frame before = f;
  const size_t n = trim_frame(f, parse_frame(f), {.size = 128, .dscp = 46});
  EXPECT_EQ(n, before.size());
  EXPECT_EQ(f[15] >> 2, 46);
  EXPECT_EQ(f[15] & 3, 2) << "the ECN bits are kept";
  EXPECT_TRUE(ipv4_header_ok(f, 14));
  EXPECT_TRUE(std::equal(f.begin() + 34, f.end(), before.begin() + 34)) << "the rest untouched";
}

TEST(FrameTrim, DscpRewriteOnIpv6KeepsEcnAndFlowLabelNibble) {
  Frame f = testing::build_frame({.ipv6 = true, .proto = 6, .dscp = 12, .ecn = 1, .payload = 400});
  f[15] |= 0x0a;  // the flow label's top nibble shares the byte
  trim_frame(f, parse_frame(f), {.size = 128, .dscp = 33});
  const ParsedFrame p = parse_frame(std::span<const uint8_t>(f.data(), 128));
  EXPECT_EQ(p.dscp, 33);
  EXPECT_EQ(p.ecn, 1);
  EXPECT_EQ(f[15] & 0x0f, 0x0a);
}

TEST(FrameTrim, WithoutFixLengthsTheIpHeaderStillClaimsTheWholePacket) {
  Frame f = testing::build_frame({.proto = 6, .payload = 1000});
  const uint16_t total = rd16(f, 16);
  const size_t n = trim_frame(f, parse_frame(f), {.size = 200, .fix_lengths = false});
  EXPECT_EQ(n, 200u);
  EXPECT_EQ(rd16(f, 16), total);
}

TEST(FrameTrim, AUdpChecksumOfZeroStaysZero) {
  Frame f = testing::build_frame({.proto = 17, .payload = 600});
  testing::put16(f, 34 + 6, 0);
  ASSERT_EQ(trim_frame(f, parse_frame(f), {.size = 128}), 128u);
  EXPECT_EQ(rd16(f, 40), 0);
  EXPECT_EQ(rd16(f, 38), 128 - 34);
}

TEST(FrameTrim, NonIpAndFragmentsCannotBeTrimmed) {
  Frame arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(trim_floor(arp, parse_frame(arp)), 0u);
  EXPECT_EQ(trim_frame(arp, parse_frame(arp), {}), 0u);
  Frame frag = testing::build_frame({.proto = 17, .payload = 600});
  testing::put16(frag, 14 + 6, 0x0010);  // fragment offset 16 * 8 bytes
  testing::put16(frag, 24, 0);
  testing::put16(frag, 24, ipv4_header_checksum(&frag[14], 20));
  EXPECT_EQ(trim_frame(frag, parse_frame(frag), {}), 0u);
}

// IPv6 extension headers stay whole: the cut falls after them and the L4 header, the payload
// length counts them, the UDP length and checksum cover what is left of the datagram.
TEST(FrameTrim, Ipv6ExtensionHeadersAreKeptAndTheChecksumCoversWhatIsLeft) {
  for (uint8_t proto : {uint8_t{6}, uint8_t{17}}) {
    Frame f =
        testing::with_ipv6_ext(testing::build_frame({.ipv6 = true, .proto = proto, .payload = 900}),
                               14, {testing::hop_by_hop(3), testing::routing_header(0)});
    complete_l4_checksum(f, parse_frame(f));
    const ParsedFrame p = parse_frame(f);
    ASSERT_TRUE(p.ok()) << to_string(p.error);
    const size_t l4 = 14 + 40 + 32 + 24;
    ASSERT_EQ(p.l4_offset, l4);
    ASSERT_TRUE(l4_checksum_ok(f, 14, l4, true, proto));
    // 64 bytes asked: not below the headers, extension headers included.
    Frame cut = f;
    const size_t n = trim_frame(cut, p, {.size = 64});
    EXPECT_EQ(n, trim_floor(f, p));
    EXPECT_EQ(n, l4 + (proto == 6 ? 20u : 8u));
    // 200 bytes: payload length, UDP length, checksum over the datagram cut.
    cut = f;
    ASSERT_EQ(trim_frame(cut, p, {.size = 200}), 200u);
    cut.resize(200);
    EXPECT_EQ(rd16(cut, 14 + 4), 200 - 14 - 40);
    if (proto == 17) {
      EXPECT_EQ(rd16(cut, l4 + 4), 200 - l4);
    }
    EXPECT_TRUE(l4_checksum_ok(cut, 14, l4, true, proto)) << int{proto};
  }
}

// A fragment (first or later, IPv4 or IPv6) is not trimmed: its cut could not be reassembled, and
// a first fragment's L4 checksum covers bytes in the others. Nor is a packet whose routing header
// still has segments to visit (its checksum's destination is not in the IP header).
TEST(FrameTrim, FragmentsAndRoutedIpv6AreNotTrimmed) {
  Frame first4 = testing::build_frame({.proto = 17, .payload = 600});
  testing::put16(first4, 14 + 6, 0x2000);  // more fragments, offset 0
  testing::put16(first4, 24, 0);
  testing::put16(first4, 24, ipv4_header_checksum(&first4[14], 20));
  ASSERT_TRUE(parse_frame(first4).ok());
  EXPECT_EQ(trim_frame(first4, parse_frame(first4), {}), 0u);
  for (const auto& ext : {testing::fragment_header(0, true), testing::fragment_header(40, false),
                          testing::routing_header(2)}) {
    Frame f =
        testing::with_ipv6_ext(testing::build_frame({.ipv6 = true, .payload = 600}), 14, {ext});
    ASSERT_TRUE(parse_frame(f).ok());
    EXPECT_EQ(trim_frame(f, parse_frame(f), {}), 0u) << int{ext.type};
  }
}

TEST(FrameTrim, EthernetPaddingIsNotPacketData) {
  // A 20-byte UDP payload in a frame padded to 150 bytes: the IP packet ends at 62, so a cut at
  // 128 cuts nothing of it.
  Frame f = testing::build_frame({.proto = 17, .payload = 20});
  f.resize(150, 0xee);
  EXPECT_EQ(trim_frame(f, parse_frame(f), {.size = 128}), 150u);
  EXPECT_EQ(rd16(f, 16), 20 + 8 + 20);
}

TEST(FrameTrim, ReturnToSenderSwapsAddressesAndPortsKeepingChecksumsValid) {
  for (const bool ipv6 : {false, true}) {
    Frame f = testing::build_frame(
        {.ipv6 = ipv6, .proto = 6, .src_port = 40000, .dst_port = 5201, .payload = 600});
    complete_l4_checksum(f, parse_frame(f));
    const Frame before = f;
    const ParsedFrame p = parse_frame(f);
    ASSERT_EQ(trim_frame(f, p, {.size = 128}), 128u);
    f.resize(128);
    swap_addresses(f, p);
    const ParsedFrame q = parse_frame(f);
    ASSERT_TRUE(q.ok());
    EXPECT_TRUE(std::equal(f.begin(), f.begin() + 6, before.begin() + 6)) << "dst MAC = old src";
    EXPECT_TRUE(std::equal(f.begin() + 6, f.begin() + 12, before.begin()));
    EXPECT_EQ(q.src_port, 5201);
    EXPECT_EQ(q.dst_port, 40000);
    const size_t src = ipv6 ? 14 + 8 : 14 + 12, len = ipv6 ? 16 : 4;
    EXPECT_TRUE(std::equal(f.begin() + static_cast<long>(src),
                           f.begin() + static_cast<long>(src + len),
                           before.begin() + static_cast<long>(src + len)))
        << "src IP = old dst IP";
    if (!ipv6) {
      EXPECT_TRUE(ipv4_header_ok(f, 14));
    }
    EXPECT_TRUE(l4_checksum_ok(f, 14, ipv6 ? 54 : 34, ipv6, 6));
  }
}

}  // namespace
}  // namespace sharebuf::model

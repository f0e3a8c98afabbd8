// Frame parsing for the RX path: Ethernet, one or two 802.1Q/802.1ad tags, IPv4, IPv6 (with its
// extension headers: hop-by-hop, routing, fragment, destination options, AH; at most
// kMaxIpv6ExtHeaders of them), TCP, UDP. It never reads past the frame: every header is checked
// against the captured length before it is touched, and a malformed frame yields a reason from one
// enum with stable names (counted per port, then dropped). Non-IP frames (ARP, LLDP, ...) are valid
// L2 frames and are forwarded as such.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sharebuf::model {

enum class ParseError : uint8_t {
  kNone = 0,
  kRunt,            // shorter than an Ethernet header
  kVlanTruncated,   // a VLAN tag cut short
  kIpv4Truncated,   // shorter than the minimal IPv4 header
  kIpv4BadVersion,  // EtherType says IPv4, version nibble does not
  kIpv4BadIhl,      // header length < 20 bytes or past the frame
  kIpv4BadLength,   // total length < header length or past the frame
  kIpv6Truncated,   // shorter than the 40-byte IPv6 header
  kIpv6BadVersion,
  kIpv6BadLength,     // payload length past the frame
  kL4Truncated,       // TCP/UDP header cut short
  kTcpBadOffset,      // TCP data offset < 5 words or past the packet
  kUdpBadLength,      // UDP length < 8 or past the packet
  kIpv6BadExtHeader,  // an IPv6 extension header past the payload, or more than the parser follows
  kCount,
};
inline constexpr size_t kNumParseErrors = static_cast<size_t>(ParseError::kCount);
inline constexpr std::array<std::string_view, kNumParseErrors> kParseErrorNames = {
    "none",
    "runt",
    "vlan_truncated",
    "ipv4_truncated",
    "ipv4_bad_version",
    "ipv4_bad_ihl",
    "ipv4_bad_length",
    "ipv6_truncated",
    "ipv6_bad_version",
    "ipv6_bad_length",
    "l4_truncated",
    "tcp_bad_offset",
    "udp_bad_length",
    "ipv6_bad_ext_header",
};
constexpr std::string_view to_string(ParseError e) noexcept {
  return kParseErrorNames[static_cast<size_t>(e)];
}

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeQinQ = 0x88a8;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;
// IPv6 extension headers beyond this many are refused (a bounded walk per frame; RFC 8504 lets a
// node limit them too).
inline constexpr int kMaxIpv6ExtHeaders = 8;

struct ParsedFrame {
  ParseError error = ParseError::kNone;
  const uint8_t* dst_mac = nullptr;
  const uint8_t* src_mac = nullptr;
  uint16_t ethertype = 0;  // after any VLAN tags
  bool has_vlan = false;
  uint8_t pcp = 0;  // 802.1p priority of the outer tag
  uint16_t vlan_id = 0;
  uint16_t l3_offset = 0;  // 0 when not IP
  uint16_t l3_end = 0;     // past the IP header, IPv4 options and IPv6 extension headers
  uint8_t ip_version = 0;  // 4, 6, or 0 (not IP)
  uint8_t dscp = 0;
  uint8_t ecn = 0;         // the two ECN bits: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
  uint8_t l4_proto = 0;    // IPv6: the last extension header's next header
  uint16_t l4_offset = 0;  // 0 when no TCP/UDP header was parsed
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint32_t src_ip4 = 0;  // host order, IPv4 only
  uint32_t dst_ip4 = 0;
  bool is_fragment = false;  // a non-first fragment (IPv4 or IPv6): no L4 header to parse
  bool fragmented = false;   // any fragment, the first included: its L4 checksum spans others
  // IPv6 routing header with segments left: the L4 checksum's destination is not the one in the
  // IP header, so a cut copy's checksum cannot be completed here.
  bool routed = false;

  bool ok() const noexcept { return error == ParseError::kNone; }
  bool dst_is_group() const noexcept { return (dst_mac[0] & 1) != 0; }  // broadcast/multicast
  bool src_is_group() const noexcept { return (src_mac[0] & 1) != 0; }
  bool ect() const noexcept { return ecn == 1 || ecn == 2; }
};

ParsedFrame parse_frame(std::span<const uint8_t> frame) noexcept;

// A non-zero hash of the frame's flow (IPv4 5-tuple; for IPv6, whose addresses the parser does
// not keep, the MAC addresses stand in for them), or 0 for frames that are not IP.
uint32_t flow_hash(const ParsedFrame& frame) noexcept;

}  // namespace sharebuf::model

#include "model/frame_parser.h"

namespace sharebuf::model {
namespace {

uint16_t be16(const uint8_t* p) noexcept {
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
uint32_t be32(const uint8_t* p) noexcept {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

constexpr uint8_t kIpProtoHopByHop = 0;
constexpr uint8_t kIpProtoRouting = 43;
constexpr uint8_t kIpProtoFragment = 44;
constexpr uint8_t kIpProtoAh = 51;
constexpr uint8_t kIpProtoDestOptions = 60;

// The IPv6 extension headers the parser walks. ESP (50) ends the walk: what follows is encrypted.
bool is_ipv6_ext_header(uint8_t next) noexcept {
  return next == kIpProtoHopByHop || next == kIpProtoRouting || next == kIpProtoFragment ||
         next == kIpProtoAh || next == kIpProtoDestOptions;
}

ParsedFrame fail(ParsedFrame f, ParseError e) noexcept {
  f.error = e;
  return f;
}

// Parses TCP/UDP at `off` within a packet that ends at `end`.
ParsedFrame parse_l4(ParsedFrame f, const uint8_t* p, size_t off, size_t end) noexcept {
  if (f.l4_proto != kIpProtoTcp && f.l4_proto != kIpProtoUdp) return f;
  const size_t min = f.l4_proto == kIpProtoTcp ? 20 : 8;
  if (end < off || end - off < min) return fail(f, ParseError::kL4Truncated);
  if (f.l4_proto == kIpProtoTcp) {
    const size_t data_offset = static_cast<size_t>(p[off + 12] >> 4) * 4;
    if (data_offset < 20 || data_offset > end - off) return fail(f, ParseError::kTcpBadOffset);
  } else {
    const size_t len = be16(p + off + 4);
    if (len < 8 || len > end - off) return fail(f, ParseError::kUdpBadLength);
  }
  f.l4_offset = static_cast<uint16_t>(off);
  f.src_port = be16(p + off);
  f.dst_port = be16(p + off + 2);
  return f;
}

}  // namespace

ParsedFrame parse_frame(std::span<const uint8_t> frame) noexcept {
  ParsedFrame f;
  const uint8_t* p = frame.data();
  const size_t n = frame.size();
  if (n < 14) {
    // Point the MACs at something valid so callers never dereference null.
    static constexpr uint8_t kZeroMac[6] = {};
    f.dst_mac = f.src_mac = kZeroMac;
    return fail(f, ParseError::kRunt);
  }
  f.dst_mac = p;
  f.src_mac = p + 6;
  size_t off = 12;
  uint16_t type = be16(p + off);
  for (int tags = 0; (type == kEtherTypeVlan || type == kEtherTypeQinQ) && tags < 2; ++tags) {
    if (n < off + 6) return fail(f, ParseError::kVlanTruncated);
    const uint16_t tci = be16(p + off + 2);
    if (!f.has_vlan) {
      f.has_vlan = true;
      f.pcp = static_cast<uint8_t>(tci >> 13);
      f.vlan_id = tci & 0x0fff;
    }
    off += 4;
    type = be16(p + off);
  }
  off += 2;
  f.ethertype = type;

  if (type == kEtherTypeIpv4) {
    if (n - off < 20) return fail(f, ParseError::kIpv4Truncated);
    const uint8_t* ip = p + off;
    if ((ip[0] >> 4) != 4) return fail(f, ParseError::kIpv4BadVersion);
    const size_t ihl = static_cast<size_t>(ip[0] & 0x0f) * 4;
    if (ihl < 20 || ihl > n - off) return fail(f, ParseError::kIpv4BadIhl);
    const size_t total = be16(ip + 2);
    if (total < ihl || total > n - off) return fail(f, ParseError::kIpv4BadLength);
    f.ip_version = 4;
    f.l3_offset = static_cast<uint16_t>(off);
    f.dscp = ip[1] >> 2;
    f.ecn = ip[1] & 3;
    f.l4_proto = ip[9];
    f.src_ip4 = be32(ip + 12);
    f.dst_ip4 = be32(ip + 16);
    f.is_fragment = (be16(ip + 6) & 0x1fff) != 0;
    f.fragmented = (be16(ip + 6) & 0x3fff) != 0;  // an offset, or more fragments to come
    f.l3_end = static_cast<uint16_t>(off + ihl);
    if (f.is_fragment) return f;
    return parse_l4(f, p, off + ihl, off + total);
  }
  if (type == kEtherTypeIpv6) {
    if (n - off < 40) return fail(f, ParseError::kIpv6Truncated);
    const uint8_t* ip = p + off;
    if ((ip[0] >> 4) != 6) return fail(f, ParseError::kIpv6BadVersion);
    const size_t payload = be16(ip + 4);
    if (payload > n - off - 40) return fail(f, ParseError::kIpv6BadLength);
    const uint8_t tclass = static_cast<uint8_t>(((ip[0] & 0x0f) << 4) | (ip[1] >> 4));
    f.ip_version = 6;
    f.l3_offset = static_cast<uint16_t>(off);
    f.dscp = tclass >> 2;
    f.ecn = tclass & 3;
    const size_t end = off + 40 + payload;
    size_t at = off + 40;
    uint8_t next = ip[6];
    for (int ext = 0; is_ipv6_ext_header(next); ++ext) {
      if (ext == kMaxIpv6ExtHeaders || end - at < 8) return fail(f, ParseError::kIpv6BadExtHeader);
      const uint8_t* h = p + at;
      const size_t len = next == kIpProtoFragment ? 8
                         : next == kIpProtoAh     ? (size_t{h[1]} + 2) * 4
                                                  : (size_t{h[1]} + 1) * 8;
      if (len > end - at) return fail(f, ParseError::kIpv6BadExtHeader);
      if (next == kIpProtoFragment) {
        f.fragmented = true;
        f.is_fragment = (be16(h + 2) & 0xfff8) != 0;  // fragment offset
      } else if (next == kIpProtoRouting && h[3] != 0) {
        f.routed = true;  // segments left
      }
      next = h[0];
      at += len;
    }
    f.l4_proto = next;
    f.l3_end = static_cast<uint16_t>(at);
    if (f.is_fragment) return f;
    return parse_l4(f, p, at, end);
  }
  return f;
}

uint32_t flow_hash(const ParsedFrame& f) noexcept {
  if (f.ip_version == 0) return 0;
  uint64_t h = (uint64_t{f.src_ip4} << 32) ^ f.dst_ip4;
  h ^= (uint64_t{f.l4_proto} << 56) ^ (uint64_t{f.src_port} << 16) ^ f.dst_port;
  if (f.ip_version == 6) {
    for (int i = 0; i < 6; ++i)
      h ^= (uint64_t{f.src_mac[i]} << (8 * i)) ^ (uint64_t{f.dst_mac[i]} << (8 * i + 16));
  }
  h *= 0x9e3779b97f4a7c15ull;
  h ^= h >> 32;
  return static_cast<uint32_t>(h) | 1u;
}

}  // namespace sharebuf::model

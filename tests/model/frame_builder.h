// Builds test frames byte by byte: Ethernet (+ VLAN), IPv4/IPv6, TCP/UDP with valid checksums.
#pragma once

#include <cstdint>
#include <vector>

#include "model/checksum.h"

namespace sharebuf::testing {

struct FrameSpec {
  bool vlan = false;
  uint8_t pcp = 0;
  bool ipv6 = false;
  uint8_t proto = 17;  // 6 TCP, 17 UDP
  uint8_t dscp = 0;
  uint8_t ecn = 0;
  uint16_t src_port = 1000;
  uint16_t dst_port = 2000;
  uint32_t payload = 32;
  uint8_t src_last = 1;
  uint8_t dst_last = 2;
};

inline void put16(std::vector<uint8_t>& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}

inline std::vector<uint8_t> build_frame(const FrameSpec& s) {
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, s.dst_last, 0x02, 0, 0, 0, 0, s.src_last};
  if (s.vlan) {
    f.insert(f.end(), {0x81, 0x00, static_cast<uint8_t>(s.pcp << 5), 10});
  }
  const size_t l3 = f.size() + 2;
  const size_t l4_len = (s.proto == 6 ? 20 : 8) + s.payload;
  if (!s.ipv6) {
    f.insert(f.end(), {0x08, 0x00});
    f.resize(l3 + 20 + l4_len, 0);
    f[l3] = 0x45;
    f[l3 + 1] = static_cast<uint8_t>((s.dscp << 2) | s.ecn);
    put16(f, l3 + 2, static_cast<uint16_t>(20 + l4_len));
    f[l3 + 8] = 64;
    f[l3 + 9] = s.proto;
    const uint8_t src[4] = {198, 18, 0, s.src_last};
    const uint8_t dst[4] = {198, 18, 0, s.dst_last};
    std::copy(src, src + 4, f.begin() + static_cast<long>(l3 + 12));
    std::copy(dst, dst + 4, f.begin() + static_cast<long>(l3 + 16));
    put16(f, l3 + 10, model::ipv4_header_checksum(&f[l3], 20));
  } else {
    f.insert(f.end(), {0x86, 0xdd});
    f.resize(l3 + 40 + l4_len, 0);
    const uint8_t tclass = static_cast<uint8_t>((s.dscp << 2) | s.ecn);
    f[l3] = static_cast<uint8_t>(0x60 | (tclass >> 4));
    f[l3 + 1] = static_cast<uint8_t>(tclass << 4);
    put16(f, l3 + 4, static_cast<uint16_t>(l4_len));
    f[l3 + 6] = s.proto;
    f[l3 + 7] = 64;
    f[l3 + 23] = s.src_last;
    f[l3 + 39] = s.dst_last;
  }
  const size_t l4 = l3 + (s.ipv6 ? 40 : 20);
  put16(f, l4, s.src_port);
  put16(f, l4 + 2, s.dst_port);
  if (s.proto == 6) {
    f[l4 + 12] = 0x50;
  } else {
    put16(f, l4 + 4, static_cast<uint16_t>(l4_len));
  }
  for (size_t i = 0; i < s.payload; ++i)
    f[l4 + (s.proto == 6 ? 20 : 8) + i] = static_cast<uint8_t>(i);
  return f;
}

// An IPv6 extension header for with_ipv6_ext(): its type and its bytes, whose first byte (the
// next header) the helper fills in.
struct Ipv6Ext {
  uint8_t type;
  std::vector<uint8_t> bytes;
};
inline Ipv6Ext hop_by_hop(size_t units = 0) {  // 8 * (units + 1) bytes of padding options
  std::vector<uint8_t> b(8 * (units + 1), 0);
  b[1] = static_cast<uint8_t>(units);
  b[2] = 1;  // PadN covering the rest
  b[3] = static_cast<uint8_t>(b.size() - 4);
  return {0, b};
}
inline Ipv6Ext fragment_header(uint16_t offset_units, bool more) {
  std::vector<uint8_t> b(8, 0);
  put16(b, 2, static_cast<uint16_t>((offset_units << 3) | (more ? 1 : 0)));
  return {44, b};
}
inline Ipv6Ext routing_header(uint8_t segments_left) {  // type 4 (SRH) with one 16-byte segment
  std::vector<uint8_t> b(24, 0);
  b[1] = 2;
  b[2] = 4;
  b[3] = segments_left;
  return {43, b};
}

// Inserts `exts` between a built IPv6 frame's 40-byte header (at `l3`) and its L4 header,
// chaining the next-header fields and growing the payload length. The L4 checksum is left as it
// was (complete_l4_checksum() makes it valid).
inline std::vector<uint8_t> with_ipv6_ext(std::vector<uint8_t> f, size_t l3,
                                          std::vector<Ipv6Ext> exts) {
  uint8_t next = f[l3 + 6];
  size_t added = 0;
  for (auto it = exts.rbegin(); it != exts.rend(); ++it) {
    it->bytes[0] = next;
    next = it->type;
  }
  f[l3 + 6] = next;
  size_t at = l3 + 40;
  for (const Ipv6Ext& e : exts) {
    f.insert(f.begin() + static_cast<long>(at), e.bytes.begin(), e.bytes.end());
    at += e.bytes.size();
    added += e.bytes.size();
  }
  put16(f, l3 + 4, static_cast<uint16_t>(((f[l3 + 4] << 8) | f[l3 + 5]) + added));
  return f;
}

}  // namespace sharebuf::testing

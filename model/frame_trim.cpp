#include "model/frame_trim.h"

#include <algorithm>

#include "model/checksum.h"

namespace sharebuf::model {
namespace {

uint16_t be16(const uint8_t* p) noexcept {
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}

void put16(uint8_t* p, uint32_t v) noexcept {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// Where the IP packet ends in the frame (Ethernet padding after it is not part of it).
size_t ip_end(std::span<const uint8_t> frame, const ParsedFrame& f) noexcept {
  const uint8_t* ip = frame.data() + f.l3_offset;
  const size_t end =
      f.ip_version == 4 ? f.l3_offset + be16(ip + 2) : f.l3_offset + 40u + be16(ip + 4);
  return std::min(end, frame.size());
}

void set_dscp(uint8_t* ip, int version, int dscp) noexcept {
  if (version == 4) {
    ip[1] = static_cast<uint8_t>((dscp << 2) | (ip[1] & 0x03));
  } else {  // traffic class: the low nibble of byte 0 and the high nibble of byte 1
    const uint8_t tc = static_cast<uint8_t>((dscp << 2) | ((ip[1] >> 4) & 0x03));
    ip[0] = static_cast<uint8_t>((ip[0] & 0xf0) | (tc >> 4));
    ip[1] = static_cast<uint8_t>(((tc & 0x0f) << 4) | (ip[1] & 0x0f));
  }
}

}  // namespace

void swap_addresses(std::span<uint8_t> frame, const ParsedFrame& f) noexcept {
  auto swap_ranges = [&](size_t a, size_t b, size_t n) {
    std::swap_ranges(frame.begin() + static_cast<ptrdiff_t>(a),
                     frame.begin() + static_cast<ptrdiff_t>(a + n),
                     frame.begin() + static_cast<ptrdiff_t>(b));
  };
  swap_ranges(0, 6, 6);  // destination and source MAC
  if (f.ip_version == 4) {
    swap_ranges(f.l3_offset + 12u, f.l3_offset + 16u, 4);
  } else if (f.ip_version == 6) {
    swap_ranges(f.l3_offset + 8u, f.l3_offset + 24u, 16);
  }
  if (f.l4_offset != 0) swap_ranges(f.l4_offset, f.l4_offset + 2u, 2);
}

uint32_t trim_floor(std::span<const uint8_t> frame, const ParsedFrame& f) noexcept {
  // A fragment's cut could not be reassembled, and a first fragment's L4 checksum covers bytes
  // in the others; behind a routing header the checksum's destination is another address.
  if (!f.ok() || f.ip_version == 0 || f.fragmented || f.routed) return 0;
  // IP without a TCP/UDP header the parser knows: keep the IP header with its options or
  // extension headers.
  if (f.l4_offset == 0) return f.l3_end;
  const uint8_t* l4 = frame.data() + f.l4_offset;
  const uint32_t l4_header =
      f.l4_proto == kIpProtoTcp ? static_cast<uint32_t>(l4[12] >> 4) * 4 : 8u;
  return f.l4_offset + l4_header;
}

size_t trim_frame(std::span<uint8_t> frame, const ParsedFrame& f,
                  const TrimOptions& options) noexcept {
  const uint32_t floor = trim_floor(frame, f);
  if (floor == 0) return 0;
  uint8_t* ip = frame.data() + f.l3_offset;
  const size_t end = ip_end(frame, f);
  const size_t cut = std::max<size_t>(options.size, floor);
  if (options.dscp >= 0) set_dscp(ip, f.ip_version, options.dscp);
  if (cut >= end) {  // nothing of the packet to cut: sent whole
    if (f.ip_version == 4) put16(ip + 10, ipv4_header_checksum(ip, (ip[0] & 0x0f) * 4u));
    return frame.size();
  }
  if (options.fix_lengths) {
    if (f.ip_version == 4) {
      put16(ip + 2, static_cast<uint32_t>(cut - f.l3_offset));
    } else {
      put16(ip + 4, static_cast<uint32_t>(cut - f.l3_offset - 40));
    }
    if (f.l4_offset != 0) {
      uint8_t* l4 = frame.data() + f.l4_offset;
      if (f.l4_proto == kIpProtoUdp) put16(l4 + 4, static_cast<uint32_t>(cut - f.l4_offset));
      // A UDP checksum of 0 over IPv4 means "none": left so.
      const bool no_udp_checksum =
          f.l4_proto == kIpProtoUdp && f.ip_version == 4 && be16(l4 + 6) == 0;
      if (!no_udp_checksum) complete_l4_checksum(frame.first(cut), f);
    }
  }
  if (f.ip_version == 4) put16(ip + 10, ipv4_header_checksum(ip, (ip[0] & 0x0f) * 4u));
  return cut;
}

}  // namespace sharebuf::model

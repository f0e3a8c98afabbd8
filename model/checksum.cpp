#include "model/checksum.h"

namespace sharebuf::model {
namespace {

uint64_t sum_bytes(const uint8_t* p, size_t n, uint64_t sum) noexcept {
  for (; n >= 2; p += 2, n -= 2)
    sum += static_cast<uint32_t>((p[0] << 8) | p[1]);
  if (n == 1) sum += static_cast<uint32_t>(p[0] << 8);
  return sum;
}

uint16_t fold(uint64_t sum) noexcept {
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

}  // namespace

uint16_t ipv4_header_checksum(const uint8_t* header, size_t length) noexcept {
  uint64_t sum = sum_bytes(header, 10, 0);
  sum = sum_bytes(header + 12, length - 12, sum);
  return static_cast<uint16_t>(~fold(sum));
}

bool complete_l4_checksum(std::span<uint8_t> frame, const ParsedFrame& f) noexcept {
  if (!f.ok() || f.l4_offset == 0) return false;
  uint8_t* ip = frame.data() + f.l3_offset;
  uint8_t* l4 = frame.data() + f.l4_offset;
  size_t l4_len;
  uint64_t sum = 0;
  if (f.ip_version == 4) {
    const size_t total = static_cast<size_t>((ip[2] << 8) | ip[3]);
    l4_len = total - (f.l4_offset - f.l3_offset);
    sum = sum_bytes(ip + 12, 8, sum);  // source and destination addresses
  } else {
    // The payload length counts extension headers too.
    l4_len = 40 + static_cast<size_t>((ip[4] << 8) | ip[5]) - (f.l4_offset - f.l3_offset);
    sum = sum_bytes(ip + 8, 32, sum);
  }
  sum += f.l4_proto;
  sum += l4_len;
  const size_t check_at = f.l4_proto == kIpProtoTcp ? 16 : 6;
  l4[check_at] = 0;
  l4[check_at + 1] = 0;
  sum = sum_bytes(l4, l4_len, sum);
  uint16_t c = static_cast<uint16_t>(~fold(sum));
  if (c == 0 && f.l4_proto == kIpProtoUdp) c = 0xffff;  // UDP: 0 means "no checksum"
  l4[check_at] = static_cast<uint8_t>(c >> 8);
  l4[check_at + 1] = static_cast<uint8_t>(c);
  return true;
}

}  // namespace sharebuf::model

#include "model/ecn.h"

namespace sharebuf::model {

bool mark_ce(std::span<uint8_t> frame, const ParsedFrame& parsed) noexcept {
  if (!parsed.ok() || !parsed.ect()) return false;
  uint8_t* ip = frame.data() + parsed.l3_offset;
  if (parsed.ip_version == 4) {
    // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m being the 16-bit word holding the TOS byte.
    const uint16_t old_word = static_cast<uint16_t>((ip[0] << 8) | ip[1]);
    ip[1] |= 0x03;
    const uint16_t new_word = static_cast<uint16_t>((ip[0] << 8) | ip[1]);
    const uint16_t old_sum = static_cast<uint16_t>((ip[10] << 8) | ip[11]);
    uint32_t sum = static_cast<uint16_t>(~old_sum) + static_cast<uint16_t>(~old_word) + new_word;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    const uint16_t new_sum = static_cast<uint16_t>(~sum);
    ip[10] = static_cast<uint8_t>(new_sum >> 8);
    ip[11] = static_cast<uint8_t>(new_sum);
    return true;
  }
  if (parsed.ip_version == 6) {
    // Traffic class spans the low nibble of byte 0 and the high nibble of byte 1; ECN is its
    // two low bits, i.e. bits 5..4 of byte 1.
    ip[1] |= 0x30;
    return true;
  }
  return false;
}

CeUndo ce_undo(std::span<const uint8_t> frame, const ParsedFrame& parsed) noexcept {
  CeUndo u;
  if (!parsed.ok() || static_cast<size_t>(parsed.l3_offset) + 12 > frame.size()) return u;
  const uint8_t* ip = frame.data() + parsed.l3_offset;
  u.tos = ip[1];
  u.checksum[0] = ip[10];
  u.checksum[1] = ip[11];
  return u;
}

void undo_ce(std::span<uint8_t> frame, const ParsedFrame& parsed, const CeUndo& undo) noexcept {
  if (!parsed.ok() || static_cast<size_t>(parsed.l3_offset) + 12 > frame.size()) return;
  uint8_t* ip = frame.data() + parsed.l3_offset;
  ip[1] = undo.tos;
  if (parsed.ip_version == 4) {
    ip[10] = undo.checksum[0];
    ip[11] = undo.checksum[1];
  }
}

}  // namespace sharebuf::model

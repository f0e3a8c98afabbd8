// ECN CE marking (DCTCP-style: the switch marks ECT frames while their queue is above K) with the
// IPv4 header checksum updated incrementally (RFC 1624), so no full recomputation per mark.
#pragma once

#include <cstdint>
#include <span>

#include "model/frame_parser.h"

namespace sharebuf::model {

// Sets the ECN field of an ECT frame to CE in place. Returns false (and changes nothing) when the
// frame is not IP or not ECT.
bool mark_ce(std::span<uint8_t> frame, const ParsedFrame& parsed) noexcept;

// What mark_ce changes, kept to undo it: the copies of a flooded frame share its bytes, but each
// copy is marked or not as its own queue decides (the replay and ns-3 mark per copy).
struct CeUndo {
  uint8_t tos = 0;           // IPv4: the TOS byte; IPv6: byte 1 (the traffic class's low nibble)
  uint8_t checksum[2] = {};  // IPv4 header checksum
};
CeUndo ce_undo(std::span<const uint8_t> frame, const ParsedFrame& parsed) noexcept;
// Restores what ce_undo() kept (frame and parsed as given to it, for an IP frame).
void undo_ce(std::span<uint8_t> frame, const ParsedFrame& parsed, const CeUndo& undo) noexcept;

}  // namespace sharebuf::model

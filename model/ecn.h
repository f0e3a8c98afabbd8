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

}  // namespace sharebuf::model

// Internet checksums (RFC 1071): the IPv4 header checksum, and completing the TCP/UDP checksum of
// a frame the sender left partial (checksum offload: the kernel marks such frames
// TP_STATUS_CSUMNOTREADY and only the pseudo-header sum is in the field). Forwarding such a frame
// unchanged would make the receiver drop it (TcpInCsumErrors), so the RX path completes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "model/frame_parser.h"

namespace sharebuf::model {

uint16_t ipv4_header_checksum(const uint8_t* header, size_t length) noexcept;

// Recomputes the TCP or UDP checksum of `frame` from scratch (pseudo-header + segment). Returns
// false when the frame has no TCP/UDP header to fix.
bool complete_l4_checksum(std::span<uint8_t> frame, const ParsedFrame& parsed) noexcept;

}  // namespace sharebuf::model

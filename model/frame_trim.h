// Packet trimming's cut (trimming paper, sections 2-3; SONiC/SAI packet trimming): a
// frame that the buffer refuses is cut to its first `size` bytes, never below its Ethernet,
// VLAN, IP and TCP/UDP headers, so the receiver learns which packet was lost at once. With
// `fix_lengths` (sources disagree whether switches do this; the default does) the copy stays a
// valid packet: IPv4 total length and header checksum, IPv6 payload length, UDP length and the
// TCP/UDP checksum over what is left. `dscp` rewrites the DSCP (keeping the ECN bits), so the
// network can tell headers from data.
//
// Only IP frames with a parsed TCP or UDP header, or IP frames without one, can be trimmed, and
// not fragments (first ones included) nor IPv6 packets with a routing header that has segments
// left; trim_floor() says how short a copy may become, 0 when it may not be trimmed at all. The
// cut never falls inside IPv4 options or IPv6 extension headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "model/frame_parser.h"

namespace sharebuf::model {

struct TrimOptions {
  uint32_t size = 128;      // bytes on the wire without the FCS (SAI's default)
  bool fix_lengths = true;  // lengths and checksums of the cut copy made valid again
  int dscp = -1;            // 0..63 rewrites the DSCP; -1 keeps it
};

// The headers' length in `frame` as parsed: Ethernet (+ VLAN tags) + IP header (IPv4 options or
// IPv6 extension headers included) + TCP header (options included) or UDP header; 0 if the frame
// cannot be trimmed.
uint32_t trim_floor(std::span<const uint8_t> frame, const ParsedFrame& parsed) noexcept;

// Cuts `frame` (the caller's own copy, laid out as `parsed` describes) in place and returns its
// new length: max(options.size, trim_floor()), or its length if it is not longer than that (then
// only the DSCP changes). Returns 0 if the frame cannot be trimmed.
size_t trim_frame(std::span<uint8_t> frame, const ParsedFrame& parsed,
                  const TrimOptions& options) noexcept;

// Return-to-sender (SFC): swaps the Ethernet addresses, the IP addresses and the TCP/UDP ports of
// a frame laid out as `parsed` describes, so it goes back to where it came from. Every checksum
// stays valid: a one's-complement sum does not depend on the order of its words.
void swap_addresses(std::span<uint8_t> frame, const ParsedFrame& parsed) noexcept;

}  // namespace sharebuf::model

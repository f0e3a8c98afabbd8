// PacketDescriptor: what sharebuf knows about one buffered frame besides its bytes. A descriptor
// lives in the cell pool's descriptor table at the index of the frame's head cell, so a frame is
// named by one uint32_t everywhere (queues, push-out, TX) and needs no separate allocation.
// The `next`/`prev` links belong to the queue that holds the frame and are only touched under that
// queue's lock.
#pragma once

#include <cstdint>
#include <limits>

namespace sharebuf::buffer {

inline constexpr uint32_t kNoCell = std::numeric_limits<uint32_t>::max();

enum PacketFlags : uint8_t {
  kFlagEcnMarked = 1u << 0,
  kFlagTrimmed = 1u << 1,
  kFlagFlooded = 1u << 2,
  // Its cells came from its port's header reserve (BufferState::take_header_cells) and go back
  // there when it leaves. Set only by SharedBuffer::enqueue_header.
  kFlagHeaderReserve = 1u << 3,
};

struct PacketDescriptor {
  uint32_t next = kNoCell;  // toward the tail of the queue
  uint32_t prev = kNoCell;  // toward the head of the queue
  uint64_t arrival_ns = 0;
  uint32_t bytes = 0;
  uint16_t cells = 0;
  uint16_t queue = 0;  // flat queue id (BufferLayout)
  uint16_t in_port = 0;
  uint8_t class_id = 0;
  uint8_t flags = 0;
};
static_assert(sizeof(PacketDescriptor) == 32, "keep descriptors at half a cache line");

}  // namespace sharebuf::buffer

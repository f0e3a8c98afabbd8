// Accounting identities of the shared buffer (STYLE.md, Tests), checked at quiescent points —
// every test fixture's teardown, the demo, and later the daemon's shutdown:
//   per queue: received = enqueued + dropped before enqueue
//   per queue: queued packets = enqueued - dequeued - pushed out
//   per queue: occupancy cells = cells of the frames in its FIFO
//   sum(queue) = sum(port) = sum(group) = total - outside <= B, and no peak exceeds B
//   pool: physical cells - free cells = total - outside (every cell a queue holds is in a frame)
// (outside: cells of frames in a recirculation port, BufferState::outside_cells.)
// Returns one human-readable line per violated identity; empty means all hold.
#pragma once

#include <string>
#include <vector>

#include "buffer/shared_buffer.h"

namespace sharebuf::buffer {

std::vector<std::string> check_accounting(const SharedBuffer& buffer);

}  // namespace sharebuf::buffer

// Occupancy: one set of occupancy counters in cells — per queue, per port, per priority group,
// the total — and how many queues are non-empty per group and per port. BufferState keeps the
// live set; ProbeRegisters keep a published copy. BufferView reads either through the same
// layout, so a policy's code is identical in exact and probe mode.
//
// Thread-safety: every field is an atomic read and written with relaxed order; the owner of the
// set (BufferState or ProbeRegisters) documents who writes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "buffer/buffer_layout.h"

namespace sharebuf::buffer {

// Padded so that RX threads updating neighbouring queues do not share a cache line.
struct alignas(64) PaddedCounter {
  std::atomic<uint32_t> v{0};
};

struct Occupancy {
  explicit Occupancy(const BufferLayout& layout)
      : queue(std::make_unique<PaddedCounter[]>(layout.num_queues())),
        port(std::make_unique<PaddedCounter[]>(layout.num_ports())),
        active_on_port(std::make_unique<std::atomic<int32_t>[]>(layout.num_ports())) {}

  alignas(64) std::atomic<uint32_t> total{0};
  alignas(64) std::atomic<uint32_t> group[kNumPriorityGroups] = {};
  // Signed: a release may briefly be counted before the racing reserve that made the queue
  // non-empty; readers clamp at zero.
  std::atomic<int32_t> active_in_group[kNumPriorityGroups] = {};
  // Queues holding at least the fair share B/N (N = all queues): Credence's safeguard asks
  // whether any queue is that long, which this answers in O(1) instead of a scan.
  std::atomic<int32_t> long_queues{0};
  std::unique_ptr<PaddedCounter[]> queue;
  std::unique_ptr<PaddedCounter[]> port;
  std::unique_ptr<std::atomic<int32_t>[]> active_on_port;
};

}  // namespace sharebuf::buffer

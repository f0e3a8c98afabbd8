// PacketQueue: the FIFO of one egress queue. Many producers (RX workers) push at the tail, the
// port's egress worker pops at the head, and LQD push-out may remove a frame from the tail or the
// head from any RX worker.
//
// The queue is an intrusive doubly linked list threaded through the pool's descriptor table (a
// frame is its head cell index), so it needs no storage of its own, can never overflow before
// the buffer does, and supports O(1) removal at both ends. Every operation is a handful of
// stores under a per-queue SpinLock; bench/buffer/packet_queue_bench.cpp measures it against a
// std::mutex and a std::deque. A lock-free MPSC ring would make push-out from the tail racy with
// the consumer, which is why DESIGN.md allows the lock when it is cheap.
//
// Thread-safety: all members are guarded by lock_, except length_packets_approx() which reads an
// atomic mirror without the lock.
#pragma once

#include <atomic>
#include <cstdint>

#include "buffer/cell_pool.h"
#include "buffer/spin_lock.h"

namespace sharebuf::buffer {

class alignas(64) PacketQueue {
 public:
  explicit PacketQueue(CellPool* pool = nullptr) : pool_(pool) {}
  void attach(CellPool* pool) noexcept { pool_ = pool; }

  void push(uint32_t head) noexcept;
  // Each returns the removed frame's head cell, or kNoCell when the queue is empty.
  uint32_t pop_head() noexcept;
  uint32_t pop_tail() noexcept;
  // Head cell of the oldest frame without removing it (for sojourn times), or kNoCell.
  uint32_t peek_head() const noexcept;

  uint32_t length_packets_approx() const noexcept {
    return length_.load(std::memory_order_relaxed);
  }

 private:
  CellPool* pool_;
  mutable SpinLock lock_;
  uint32_t head_ = kNoCell;
  uint32_t tail_ = kNoCell;
  std::atomic<uint32_t> length_{0};
};

}  // namespace sharebuf::buffer

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
#include <mutex>

#include "buffer/cell_pool.h"
#include "common/spin_lock.h"

namespace sharebuf::buffer {

// Lock is SpinLock in sharebuf; the benchmark instantiates std::mutex as the baseline.
template <typename Lock>
class alignas(64) BasicPacketQueue {
 public:
  explicit BasicPacketQueue(CellPool* pool = nullptr) : pool_(pool) {}
  void attach(CellPool* pool) noexcept { pool_ = pool; }

  // Appends a frame; true if the queue was empty.
  bool push(uint32_t head) noexcept {
    PacketDescriptor& d = pool_->descriptor(head);
    std::lock_guard guard(lock_);
    d.next = kNoCell;
    d.prev = tail_;
    const bool was_empty = tail_ == kNoCell;
    if (!was_empty) {
      pool_->descriptor(tail_).next = head;
    } else {
      head_ = head;
    }
    tail_ = head;
    length_.store(length_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return was_empty;
  }

  // Removes the oldest frame; returns its head cell, or kNoCell when the queue is empty.
  uint32_t pop_head() noexcept {
    std::lock_guard guard(lock_);
    const uint32_t h = head_;
    if (h == kNoCell) return kNoCell;
    head_ = pool_->descriptor(h).next;
    if (head_ != kNoCell) {
      pool_->descriptor(head_).prev = kNoCell;
    } else {
      tail_ = kNoCell;
    }
    length_.store(length_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return h;
  }

  // Removes the newest frame (push-out from the tail); kNoCell when the queue is empty.
  uint32_t pop_tail() noexcept {
    std::lock_guard guard(lock_);
    const uint32_t t = tail_;
    if (t == kNoCell) return kNoCell;
    tail_ = pool_->descriptor(t).prev;
    if (tail_ != kNoCell) {
      pool_->descriptor(tail_).next = kNoCell;
    } else {
      head_ = kNoCell;
    }
    length_.store(length_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return t;
  }

  // pop_tail() if `take(descriptor)` says so for the frame at the tail; kNoCell otherwise.
  template <typename Take>
  uint32_t pop_tail_if(Take take) noexcept {
    std::lock_guard guard(lock_);
    const uint32_t t = tail_;
    if (t == kNoCell || !take(pool_->descriptor(t))) return kNoCell;
    tail_ = pool_->descriptor(t).prev;
    if (tail_ != kNoCell) {
      pool_->descriptor(tail_).next = kNoCell;
    } else {
      head_ = kNoCell;
    }
    length_.store(length_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return t;
  }

  // LQD plans its push-outs by walking a victim from one end without removing anything:
  // end() is the frame at the tail (or the head), next_from_end() the one after `frame` going
  // toward the other end; kNoCell when there is none, or when `frame` has left this queue.
  uint32_t end(bool from_head) const noexcept {
    std::lock_guard guard(lock_);
    return from_head ? head_ : tail_;
  }
  uint32_t next_from_end(uint32_t frame, bool from_head) const noexcept {
    std::lock_guard guard(lock_);
    if (!holds(frame)) return kNoCell;
    const PacketDescriptor& d = pool_->descriptor(frame);
    return from_head ? d.next : d.prev;
  }

  // Head cell of the oldest frame without removing it (for sojourn times), or kNoCell.
  uint32_t peek_head() const noexcept {
    std::lock_guard guard(lock_);
    return head_;
  }

  // The oldest frame's length in bytes, 0 when the queue is empty. Read under the lock: a head
  // drop (LQD's push-out from the head, Occamy's reclaim) may free the head frame, and another
  // thread reuse its cells, between a peek_head() and a read of its descriptor.
  uint32_t head_bytes() const noexcept {
    std::lock_guard guard(lock_);
    return head_ == kNoCell ? 0 : pool_->descriptor(head_).bytes;
  }

  // When the oldest frame arrived (the probes waiting behind it, buffer/queued_probes.h);
  // `none` when the queue is empty. Under the lock, as head_bytes().
  uint64_t head_arrival_ns(uint64_t none) const noexcept {
    std::lock_guard guard(lock_);
    return head_ == kNoCell ? none : pool_->descriptor(head_).arrival_ns;
  }

  // Head cell of the newest frame, or kNoCell (the replay datapath tracks frames by it).
  uint32_t peek_tail() const noexcept {
    std::lock_guard guard(lock_);
    return tail_;
  }

  uint32_t length_packets_approx() const noexcept {
    return length_.load(std::memory_order_relaxed);
  }

 private:
  // Under lock_: whether `frame` is still linked here. A popped frame is no longer its
  // neighbour's neighbour (nor the head), and a frame being written is linked nowhere yet.
  bool holds(uint32_t frame) const noexcept {
    if (frame == kNoCell) return false;
    const PacketDescriptor& d = pool_->descriptor(frame);
    return d.prev != kNoCell ? pool_->descriptor(d.prev).next == frame : head_ == frame;
  }

  CellPool* pool_;
  mutable Lock lock_;
  uint32_t head_ = kNoCell;
  uint32_t tail_ = kNoCell;
  // Written under lock_; read without it by length_packets_approx().
  std::atomic<uint32_t> length_{0};
};

using PacketQueue = BasicPacketQueue<common::SpinLock>;

}  // namespace sharebuf::buffer

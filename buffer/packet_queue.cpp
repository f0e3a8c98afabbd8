#include "buffer/packet_queue.h"

#include <mutex>

namespace sharebuf::buffer {

void PacketQueue::push(uint32_t head) noexcept {
  PacketDescriptor& d = pool_->descriptor(head);
  std::lock_guard guard(lock_);
  d.next = kNoCell;
  d.prev = tail_;
  if (tail_ != kNoCell) {
    pool_->descriptor(tail_).next = head;
  } else {
    head_ = head;
  }
  tail_ = head;
  length_.store(length_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

uint32_t PacketQueue::pop_head() noexcept {
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

uint32_t PacketQueue::pop_tail() noexcept {
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

uint32_t PacketQueue::peek_head() const noexcept {
  std::lock_guard guard(lock_);
  return head_;
}

}  // namespace sharebuf::buffer

#include "datapath/port_io.h"

#include <algorithm>

#include "datapath/clocks.h"

namespace sharebuf::datapath {

void PortIo::init_tx(uint32_t tx_slot_bytes, uint32_t tx_batch) {
  tx_slot_bytes_ = tx_slot_bytes;
  tx_batch_ = std::clamp<uint32_t>(tx_batch, 1, kMaxTxBatch);
  tx_staging_ = std::make_unique<uint8_t[]>(size_t{tx_batch_} * tx_slot_bytes_);
  for (uint32_t i = 0; i < tx_batch_; ++i)
    tx_ptr_[i] = tx_staging_.get() + size_t{i} * tx_slot_bytes_;
  tx_count_ = 0;
}

void PortIo::init_tx_buffers(uint32_t tx_slot_bytes, uint32_t tx_batch) {
  tx_slot_bytes_ = tx_slot_bytes;
  tx_batch_ = std::clamp<uint32_t>(tx_batch, 1, kMaxTxBatch);
  tx_staging_.reset();
  std::fill(std::begin(tx_ptr_), std::end(tx_ptr_), nullptr);
  tx_count_ = 0;
}

bool PortIo::tx_kick(buffer::DelayHistogram* sent) noexcept {
  if (tx_count_ == 0 && tx_unflushed_ == 0 && tx_ptr_[0] != nullptr) return true;
  uint64_t errors = 0;
  const uint32_t done = std::min(tx_send(tx_count_, &errors), tx_count_);
  tx_dropped_ += errors;
  if (done != 0) {
    if (sent != nullptr) {
      const uint64_t now = monotonic_ns();
      for (uint32_t i = 0; i < done; ++i) {
        if (tx_stamp_[i] != 0) sent->record(now - std::min(now, tx_stamp_[i]));
      }
    }
    // Keep what the wire did not take, in order, at the front of the staging slots: the slots'
    // buffers rotate (the taken ones, or what tx_send put in their place, go behind).
    std::rotate(tx_ptr_, tx_ptr_ + done, tx_ptr_ + tx_count_);
    for (uint32_t i = done; i < tx_count_; ++i) {
      tx_len_[i - done] = tx_len_[i];
      tx_stamp_[i - done] = tx_stamp_[i];
    }
    tx_count_ -= done;
  }
  return errors == 0;
}

}  // namespace sharebuf::datapath

#include "datapath/port_io.h"

#include <algorithm>
#include <cstring>

#include "datapath/clocks.h"

namespace sharebuf::datapath {

void PortIo::init_tx(uint32_t tx_slot_bytes, uint32_t tx_batch) {
  tx_slot_bytes_ = tx_slot_bytes;
  tx_batch_ = std::clamp<uint32_t>(tx_batch, 1, kMaxTxBatch);
  tx_staging_ = std::make_unique<uint8_t[]>(size_t{tx_batch_} * tx_slot_bytes_);
  tx_count_ = 0;
}

bool PortIo::tx_kick(buffer::DelayHistogram* sent) noexcept {
  if (tx_count_ == 0) return true;
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
    // Keep what the wire did not take, in order, at the front of the staging slots.
    for (uint32_t i = done; i < tx_count_; ++i) {
      std::memcpy(tx_frame(i - done), tx_frame(i), tx_len_[i]);
      tx_len_[i - done] = tx_len_[i];
      tx_stamp_[i - done] = tx_stamp_[i];
    }
    tx_count_ -= done;
  }
  return errors == 0;
}

}  // namespace sharebuf::datapath

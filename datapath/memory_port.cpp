#include "datapath/memory_port.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "datapath/clocks.h"

namespace sharebuf::datapath {
namespace {

std::string thread_name() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

}  // namespace

MemoryPort::MemoryPort(std::string name, uint32_t mtu, uint32_t rx_frames, uint32_t tx_batch)
    : PortIo(std::move(name), mtu), rx_frames_(std::max<uint32_t>(1, rx_frames)) {
  // What a TPACKET slot of this MTU holds: Ethernet, two VLAN tags, the MTU.
  set_rx_capacity(14 + 8 + mtu);
  init_tx(14 + 8 + mtu + 64, tx_batch);
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) throw std::runtime_error("MemoryPort: eventfd failed");
}

MemoryPort::~MemoryPort() {
  close(event_fd_);
}

int MemoryPort::rx_fd(uint32_t) const noexcept {
  return event_fd_;
}

void MemoryPort::announce_locked(bool readable) {
  if (readable == readable_) return;
  readable_ = readable;
  uint64_t v = 1;
  // The eventfd's counter is non-zero exactly while announced frames wait.
  [[maybe_unused]] const ssize_t r =
      readable ? write(event_fd_, &v, sizeof v) : read(event_fd_, &v, sizeof v);
}

bool MemoryPort::push_locked(std::span<const uint8_t> frame, const Arrival& how) {
  ++ring_frames_;
  if (ring_.size() >= rx_frames_) {
    ++ring_drops_;
    return false;
  }
  Slot& s = ring_.emplace_back();
  s.data.assign(frame.begin(), frame.begin() + std::min<size_t>(frame.size(), rx_capacity()));
  s.wire_len = static_cast<uint32_t>(frame.size());
  s.how = how;
  s.stamp_ns = realtime_ns();
  return true;
}

bool MemoryPort::inject(std::span<const uint8_t> frame, const Arrival& how) {
  std::lock_guard lock(mu_);
  const bool ok = push_locked(frame, how);
  if (ok && how.announce) announce_locked(true);
  return ok;
}

size_t MemoryPort::inject_burst(const std::vector<std::vector<uint8_t>>& frames) {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& f : frames)
    n += push_locked(f, Arrival{}) ? 1 : 0;
  if (n != 0) announce_locked(true);
  return n;
}

size_t MemoryPort::rx_waiting() const {
  std::lock_guard lock(mu_);
  return ring_.size();
}

namespace {
// Where a chunk's frame starts, as the kernel's XDP_PACKET_HEADROOM puts it.
constexpr uint32_t kChunkHeadroom = 256;
}  // namespace

void MemoryPort::use_chunks(buffer::ChunkStore& store) {
  if (store.chunk_bytes() < kChunkHeadroom + tx_capacity())
    throw std::invalid_argument("MemoryPort::use_chunks: chunks too small for the MTU");
  std::lock_guard lock(mu_);
  store_ = &store;
  for (uint32_t i = 0; i < tx_batch(); ++i) {
    uint64_t off = 0;
    if (!store.take(&off)) throw std::runtime_error("MemoryPort::use_chunks: no free chunk");
    set_tx_frame(i, reinterpret_cast<uint8_t*>(store.base()) + off + kChunkHeadroom);
  }
  set_chunks(&store, &store);
}

uint32_t MemoryPort::rx_burst(RxFrame* frames, uint32_t max, uint32_t) noexcept {
  std::lock_guard lock(mu_);
  const uint32_t n = std::min<uint32_t>(max, static_cast<uint32_t>(ring_.size()) - held_);
  if (store_ != nullptr) {
    burst_ = frames;
    burst_chunks_.assign(n, UINT64_MAX);
  }
  for (uint32_t i = 0; i < n; ++i) {
    Slot& s = ring_[held_ + i];
    RxFrame& f = frames[i];
    f.data = s.data.data();
    f.kept = false;
    f.refill = 0;
    // A frame the "kernel" finds no free chunk for stays in the slot (never kept in a chunk).
    if (uint64_t off = 0; store_ != nullptr && store_->take(&off)) {
      auto* chunk = reinterpret_cast<uint8_t*>(store_->base()) + off + kChunkHeadroom;
      std::copy(s.data.begin(), s.data.end(), chunk);
      f.data = chunk;
      burst_chunks_[i] = off;
    }
    f.len = static_cast<uint32_t>(s.data.size());
    f.wire_len = s.wire_len;
    f.vlan_valid = s.how.vlan_stripped;
    f.vlan_tci = s.how.vlan_tci;
    f.vlan_tpid = 0x8100;
    f.checksum_partial = s.how.checksum_partial;
    f.ring_realtime_ns = s.stamp_ns;
  }
  held_ += n;
  if (n != 0) taken_by_[thread_name()] += n;
  bool announced_left = false;
  for (size_t i = held_; i < ring_.size() && !announced_left; ++i)
    announced_left = ring_[i].how.announce;
  announce_locked(announced_left);
  return n;
}

void MemoryPort::rx_release(uint32_t) noexcept {
  std::lock_guard lock(mu_);
  // Each frame's chunk back; a kept frame's stays queued and its refill comes back instead.
  for (size_t i = 0; i < burst_chunks_.size(); ++i) {
    if (burst_[i].kept)
      store_->give(burst_[i].refill);
    else if (burst_chunks_[i] != UINT64_MAX)
      store_->give(burst_chunks_[i]);
  }
  burst_chunks_.clear();
  for (; held_ != 0; --held_)
    ring_.pop_front();
}

PortIo::SocketStats MemoryPort::rx_socket_stats(uint32_t) noexcept {
  std::lock_guard lock(mu_);
  return {std::exchange(ring_frames_, 0), std::exchange(ring_drops_, 0)};
}

uint32_t MemoryPort::tx_send(uint32_t count, uint64_t* hard_errors) noexcept {
  uint32_t taken = 0;
  size_t first_new = 0;
  {
    std::lock_guard lock(mu_);
    first_new = sent_.size();
    for (; taken < count; ++taken) {
      if (fail_ != 0) {
        --fail_;
        ++*hard_errors;
        continue;
      }
      if (tx_room_ == 0) break;
      if (tx_room_ != kUnlimited) --tx_room_;
      sent_.emplace_back(tx_frame(taken), tx_frame(taken) + tx_len(taken));
    }
    refused_ += count - taken;
    if (taken != 0) sends_.push_back({taken, thread_name()});
    // A sent frame's chunk is the slot's again, whichever it was (its own, or a queued frame's
    // that was sent from where it was received), at the slot's offset.
    for (uint32_t i = 0; store_ != nullptr && i < taken; ++i) {
      const auto off =
          static_cast<uint64_t>(reinterpret_cast<std::byte*>(tx_frame(i)) - store_->base());
      set_tx_frame(i, reinterpret_cast<uint8_t*>(store_->base()) +
                          (off & ~uint64_t{store_->chunk_bytes() - 1}) + kChunkHeadroom);
    }
  }
  cv_.notify_all();
  if (on_sent_) {
    // Copies: the answer may be injected into this port, and sent_ may grow meanwhile.
    std::vector<std::vector<uint8_t>> fresh;
    {
      std::lock_guard lock(mu_);
      fresh.assign(sent_.begin() + static_cast<long>(first_new), sent_.end());
    }
    for (const auto& f : fresh)
      on_sent_(f);
  }
  return taken;
}

void MemoryPort::tx_wait(int timeout_ms) noexcept {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return tx_room_ != 0; });
}

std::vector<std::vector<uint8_t>> MemoryPort::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

size_t MemoryPort::sent_count() const {
  std::lock_guard lock(mu_);
  return sent_.size();
}

bool MemoryPort::wait_sent(size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return sent_.size() >= count; });
}

std::vector<MemoryPort::Send> MemoryPort::sends() const {
  std::lock_guard lock(mu_);
  return sends_;
}

uint64_t MemoryPort::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

std::map<std::string, uint64_t> MemoryPort::taken_by() const {
  std::lock_guard lock(mu_);
  return taken_by_;
}

void MemoryPort::set_tx_room(uint64_t frames) {
  {
    std::lock_guard lock(mu_);
    tx_room_ = frames;
  }
  cv_.notify_all();
}

void MemoryPort::fail_sends(uint64_t frames) {
  std::lock_guard lock(mu_);
  fail_ = frames;
}

}  // namespace sharebuf::datapath

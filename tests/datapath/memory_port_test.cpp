// PortIo's burst contract as the in-memory port implements it (the workers' tests rely on it),
// and PortIo's own staging: frames the wire refuses stay staged in order, hard errors drop one.
#include <poll.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "datapath/memory_port.h"

namespace sharebuf::datapath {
namespace {

bool readable(const MemoryPort& p) {
  pollfd fd{p.rx_fd(), POLLIN, 0};
  return poll(&fd, 1, 0) == 1;
}

std::vector<uint8_t> bytes(size_t n, uint8_t v) {
  return std::vector<uint8_t>(n, v);
}

TEST(MemoryPort, HandsOutBurstsHeldUntilReleased) {
  MemoryPort p("m", 1500, 8);
  EXPECT_FALSE(readable(p));
  for (uint8_t i = 0; i < 3; ++i)
    ASSERT_TRUE(p.inject(bytes(60, i)));
  EXPECT_TRUE(readable(p));
  RxFrame f[4];
  ASSERT_EQ(p.rx_burst(f, 2), 2u);
  EXPECT_EQ(f[0].data[0], 0);
  EXPECT_EQ(f[1].data[0], 1);
  EXPECT_EQ(f[1].len, 60u);
  EXPECT_TRUE(readable(p)) << "one frame still waits";
  EXPECT_EQ(p.rx_waiting(), 3u) << "held frames keep their slots";
  p.rx_release();
  EXPECT_EQ(p.rx_waiting(), 1u);
  ASSERT_EQ(p.rx_burst(f, 4), 1u);
  EXPECT_EQ(f[0].data[0], 2);
  EXPECT_FALSE(readable(p));
  p.rx_release();
  EXPECT_EQ(p.rx_burst(f, 4), 0u);
}

TEST(MemoryPort, UnannouncedFramesWaitWithoutMakingTheFdReadable) {
  MemoryPort p("m");
  ASSERT_TRUE(p.inject(bytes(60, 7), {.announce = false}));
  EXPECT_FALSE(readable(p));
  RxFrame f;
  ASSERT_EQ(p.rx_burst(&f, 1), 1u);
  EXPECT_EQ(f.data[0], 7);
  p.rx_release();
}

TEST(MemoryPort, TruncatesLikeARingSlotAndCountsRingDrops) {
  MemoryPort p("m", 1500, 2);
  ASSERT_TRUE(p.inject(bytes(2000, 1)));
  ASSERT_TRUE(p.inject(bytes(60, 2)));
  EXPECT_FALSE(p.inject(bytes(60, 3)));
  const PortIo::SocketStats s = p.rx_socket_stats();
  EXPECT_EQ(s.drops, 1u);
  EXPECT_EQ(s.frames, 3u) << "what reached the ring, dropped or not";
  EXPECT_EQ(p.rx_socket_stats().drops, 0u) << "a delta since the last call";
  EXPECT_EQ(p.rx_socket_stats().frames, 0u);
  RxFrame f[2];
  ASSERT_EQ(p.rx_burst(f, 2), 2u);
  EXPECT_EQ(f[0].len, p.rx_capacity());
  EXPECT_EQ(f[0].wire_len, 2000u);
  p.rx_release();
}

void stage(PortIo& p, uint8_t v, uint64_t stamp = 0) {
  uint32_t room = 0;
  uint8_t* slot = p.tx_slot(&room);
  ASSERT_NE(slot, nullptr);
  ASSERT_GE(room, 100u);
  std::fill(slot, slot + 100, v);
  p.tx_commit(100, stamp);
}

TEST(PortIo, KeepsWhatTheWireRefusedStagedInOrder) {
  MemoryPort p("m", 1500, 8, 4);
  p.set_tx_room(2);
  for (uint8_t i = 0; i < 4; ++i)
    stage(p, i, 1);
  uint32_t room = 0;
  EXPECT_EQ(p.tx_slot(&room), nullptr) << "four staging slots";
  buffer::DelayHistogram h;
  EXPECT_TRUE(p.tx_kick(&h));
  EXPECT_EQ(p.tx_pending(), 2u);
  EXPECT_EQ(h.count(), 2u);
  stage(p, 4);
  p.set_tx_room(MemoryPort::kUnlimited);
  EXPECT_TRUE(p.tx_kick(&h));
  EXPECT_EQ(p.tx_pending(), 0u);
  EXPECT_EQ(h.count(), 4u) << "the unstamped frame records nothing";
  const auto sent = p.sent();
  ASSERT_EQ(sent.size(), 5u);
  for (uint8_t i = 0; i < 5; ++i)
    EXPECT_EQ(sent[i], bytes(100, i));
  const auto sends = p.sends();
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(sends[0].frames, 2u);
  EXPECT_EQ(sends[1].frames, 3u);
}

TEST(PortIo, DropsAFrameOnAHardErrorAndSaysSo) {
  MemoryPort p("m");
  p.fail_sends(1);
  stage(p, 1);
  stage(p, 2);
  EXPECT_FALSE(p.tx_kick());
  EXPECT_EQ(p.tx_dropped(), 1u);
  EXPECT_EQ(p.tx_pending(), 0u);
  ASSERT_EQ(p.sent_count(), 1u);
  EXPECT_EQ(p.sent()[0], bytes(100, 2));
  EXPECT_TRUE(p.tx_kick()) << "nothing staged: nothing to fail";
}

// A port whose slots are its own transmit buffers, as AF_XDP's are (datapath/xsk_port.h): a
// buffer handed to the "kernel" comes back only when complete() says so, and the kernel may hold
// frames it took without sending them yet (unflushed).
class ChunkPort final : public PortIo {
 public:
  ChunkPort(uint32_t chunks, uint32_t batch) : PortIo("chunks", 1500), memory_(chunks * 2048) {
    for (uint32_t i = 0; i < chunks; ++i)
      free_.push_back(memory_.data() + size_t{i} * 2048);
    init_tx_buffers(2048, batch);
    for (uint32_t i = 0; i < tx_batch(); ++i)
      set_tx_frame(i, take());
  }
  uint32_t rx_lanes() const noexcept override { return 1; }
  int rx_fd(uint32_t) const noexcept override { return -1; }
  uint32_t rx_burst(RxFrame*, uint32_t, uint32_t) noexcept override { return 0; }
  void rx_release(uint32_t) noexcept override {}
  SocketStats rx_socket_stats(uint32_t) noexcept override { return {}; }
  void tx_wait(int) noexcept override {}

  void complete() {
    free_.insert(free_.end(), in_flight_.begin(), in_flight_.end());
    in_flight_.clear();
  }
  uint32_t hold_unflushed = 0;  // the next send leaves this many of its frames unsent
  uint32_t sends = 0;
  std::vector<uint8_t> first_bytes;  // each sent frame's first byte, in order

 private:
  uint8_t* take() {
    if (free_.empty()) return nullptr;
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  uint32_t tx_send(uint32_t count, uint64_t*) noexcept override {
    ++sends;
    for (uint32_t i = 0; i < count; ++i) {
      first_bytes.push_back(tx_frame(i)[0]);
      in_flight_.push_back(tx_frame(i));
    }
    for (uint32_t i = 0; i < tx_batch(); ++i) {
      if (i < count || tx_frame(i) == nullptr) set_tx_frame(i, take());
    }
    set_tx_unflushed(hold_unflushed);
    hold_unflushed = 0;
    return count;
  }
  std::vector<uint8_t> memory_;
  std::vector<uint8_t*> free_, in_flight_;
};

TEST(PortIo, SlotsWithoutABufferWaitForTheKickThatGetsThemBack) {
  ChunkPort p(3, 4);
  stage(p, 1);
  stage(p, 2);
  stage(p, 3);
  uint32_t room = 0;
  EXPECT_EQ(p.tx_slot(&room), nullptr) << "three buffers for four slots";
  EXPECT_TRUE(p.tx_kick());
  EXPECT_EQ(p.tx_slot(&room), nullptr) << "all three still in the kernel's hands";
  p.complete();
  EXPECT_EQ(p.tx_pending(), 0u);
  EXPECT_TRUE(p.tx_kick()) << "nothing staged, but a slot without a buffer: the kick refills";
  EXPECT_EQ(p.sends, 2u);
  stage(p, 4);
  EXPECT_TRUE(p.tx_kick());
  EXPECT_EQ(p.first_bytes, (std::vector<uint8_t>{1, 2, 3, 4}));
}

TEST(PortIo, FramesTheKernelHoldsUnsentArePendingUntilAKickSendsThem) {
  ChunkPort p(8, 4);
  stage(p, 1);
  p.hold_unflushed = 1;
  EXPECT_TRUE(p.tx_kick());
  EXPECT_EQ(p.tx_pending(), 1u) << "taken but not sent: the egress path must kick again";
  EXPECT_TRUE(p.tx_kick());
  EXPECT_EQ(p.sends, 2u) << "a kick with nothing staged still flushes";
  EXPECT_EQ(p.tx_pending(), 0u);
  EXPECT_TRUE(p.tx_kick());
  EXPECT_EQ(p.sends, 2u) << "nothing staged, nothing held, every slot has a buffer: no call";
}

}  // namespace
}  // namespace sharebuf::datapath

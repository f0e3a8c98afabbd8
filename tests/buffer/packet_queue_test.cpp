#include "buffer/packet_queue.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sharebuf::buffer {
namespace {

class PacketQueueTest : public ::testing::Test {
 protected:
  CellPool pool_{{.accounted_cells = 4096, .cell_bytes = 80, .max_caches = 8}};
  CellCache cache_{pool_};
  PacketQueue queue_{&pool_};

  // A one-cell frame whose first byte is `tag`.
  uint32_t frame(uint8_t tag) {
    const std::byte b{tag};
    return pool_.write_frame(cache_, std::span<const std::byte>(&b, 1));
  }
  uint8_t tag_of(uint32_t head) { return static_cast<uint8_t>(*pool_.cell_data(head)); }
};

TEST_F(PacketQueueTest, EmptyQueueReturnsNoCell) {
  EXPECT_EQ(queue_.pop_head(), kNoCell);
  EXPECT_EQ(queue_.pop_tail(), kNoCell);
  EXPECT_EQ(queue_.peek_head(), kNoCell);
  EXPECT_EQ(queue_.length_packets_approx(), 0u);
}

TEST_F(PacketQueueTest, FifoOrder) {
  for (uint8_t i = 0; i < 10; ++i)
    queue_.push(frame(i));
  EXPECT_EQ(queue_.length_packets_approx(), 10u);
  for (uint8_t i = 0; i < 10; ++i) {
    const uint32_t h = queue_.pop_head();
    ASSERT_NE(h, kNoCell);
    EXPECT_EQ(tag_of(h), i);
    pool_.free_frame(cache_, h);
  }
  EXPECT_EQ(queue_.pop_head(), kNoCell);
}

// Push-out takes from the tail (newest first) and leaves the FIFO consistent for the consumer.
TEST_F(PacketQueueTest, PopTailInterleavedWithPopHead) {
  for (uint8_t i = 0; i < 6; ++i)
    queue_.push(frame(i));
  uint32_t h = queue_.pop_tail();
  EXPECT_EQ(tag_of(h), 5);
  pool_.free_frame(cache_, h);
  h = queue_.pop_head();
  EXPECT_EQ(tag_of(h), 0);
  pool_.free_frame(cache_, h);
  h = queue_.pop_tail();
  EXPECT_EQ(tag_of(h), 4);
  pool_.free_frame(cache_, h);
  queue_.push(frame(9));
  std::vector<uint8_t> rest;
  for (h = queue_.pop_head(); h != kNoCell; h = queue_.pop_head()) {
    rest.push_back(tag_of(h));
    pool_.free_frame(cache_, h);
  }
  EXPECT_EQ(rest, (std::vector<uint8_t>{1, 2, 3, 9}));
  // Emptied from the tail down to nothing, the queue is reusable.
  queue_.push(frame(1));
  h = queue_.pop_tail();
  EXPECT_EQ(tag_of(h), 1);
  pool_.free_frame(cache_, h);
  EXPECT_EQ(queue_.peek_head(), kNoCell);
  EXPECT_EQ(queue_.pop_head(), kNoCell);
}

// Four producers, one consumer: every frame arrives once and each producer's frames stay in
// order.
TEST(PacketQueueConcurrency, ManyProducersOneConsumerKeepPerProducerOrder) {
  constexpr uint32_t kProducers = 4;
  constexpr uint32_t kPerProducer = 20000;
  CellPool pool({.accounted_cells = kProducers * kPerProducer, .cell_bytes = 16, .max_caches = 8});
  PacketQueue queue(&pool);
  std::vector<std::thread> producers;
  for (uint32_t p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      CellCache cache(pool);
      for (uint32_t i = 0; i < kPerProducer; ++i) {
        const uint32_t v[2] = {p, i};
        const uint32_t h = pool.write_frame(
            cache, std::span<const std::byte>(reinterpret_cast<const std::byte*>(v), sizeof v));
        ASSERT_NE(h, kNoCell);
        queue.push(h);
      }
    });
  }
  CellCache cache(pool);
  std::vector<uint32_t> next(kProducers, 0);
  uint32_t received = 0;
  bool in_order = true;
  while (received < kProducers * kPerProducer) {
    const uint32_t h = queue.pop_head();
    if (h == kNoCell) {
      std::this_thread::yield();
      continue;
    }
    uint32_t v[2];
    pool.read_frame(h, std::span<std::byte>(reinterpret_cast<std::byte*>(v), sizeof v));
    in_order = in_order && v[0] < kProducers && v[1] == next[v[0]];
    if (v[0] < kProducers) ++next[v[0]];
    pool.free_frame(cache, h);
    ++received;
  }
  for (auto& t : producers)
    t.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(queue.pop_head(), kNoCell);
  cache.flush_all();
  EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
}

}  // namespace
}  // namespace sharebuf::buffer

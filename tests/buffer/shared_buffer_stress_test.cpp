// Many RX threads and egress threads hammer one small shared buffer. Afterwards every cell is
// accounted, every frame that was enqueued came out intact exactly once, and no occupancy counter
// ever exceeded B (its peak says so).
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/shared_buffer.h"
#include "tests/fixtures/buffer_fixture.h"

namespace sharebuf::buffer {
namespace {

class SharedBufferStress : public testing::BufferFixture {};

struct FrameHeader {
  uint32_t producer;
  uint32_t seq;
  uint32_t bytes;
  uint32_t checksum;  // over the payload that follows
};

uint32_t payload_checksum(const std::byte* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ static_cast<uint32_t>(p[i])) * 16777619u;
  return h;
}

TEST_F(SharedBufferStress, FourProducersTwoConsumersMillionFrames) {
  constexpr uint32_t kProducers = 4;
  constexpr uint32_t kConsumers = 2;
  constexpr uint32_t kFramesPerProducer = 250'000;  // 10^6 frames in all
  constexpr uint32_t kPorts = 4;
  make_buffer({.capacity_cells = 3000,
               .ports = std::vector<PortSpec>(kPorts, PortSpec{.num_queues = 2}),
               .max_threads = kProducers + kConsumers + 1,
               .cache_cells = 64});
  const uint32_t queues = buffer_->layout().num_queues();

  std::atomic<uint32_t> producers_done{0};
  std::atomic<uint64_t> enqueued{0};
  std::atomic<uint64_t> dequeued{0};
  std::atomic<uint64_t> corrupt{0};
  std::atomic<uint32_t> max_total_seen{0};
  // Consumers start once the pool has refused a frame, so the buffer is contended for sure.
  std::atomic<bool> filled{false};

  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      CellCache cache(buffer_->pool());
      std::mt19937 rng(p + 1);
      std::uniform_int_distribution<uint32_t> size(sizeof(FrameHeader), 1500);
      std::vector<std::byte> frame(1500);
      for (uint32_t seq = 0; seq < kFramesPerProducer; ++seq) {
        const uint32_t bytes = size(rng);
        const uint32_t q = static_cast<uint32_t>(rng() % queues);
        for (uint32_t i = sizeof(FrameHeader); i < bytes; ++i) {
          frame[i] = static_cast<std::byte>(seq * 31 + i);
        }
        const FrameHeader h{
            p, seq, bytes,
            payload_checksum(frame.data() + sizeof(FrameHeader), bytes - sizeof(FrameHeader))};
        std::memcpy(frame.data(), &h, sizeof h);
        buffer_->count_arrival(q);
        if (buffer_->enqueue(cache, q, std::span(frame.data(), bytes), FrameMeta{})) {
          enqueued.fetch_add(1, std::memory_order_relaxed);
        } else {
          buffer_->count_drop(q, DropReason::kPoolFull, buffer_->layout().cells_for(bytes));
          filled.store(true, std::memory_order_relaxed);
        }
        const uint32_t total = buffer_->state().total_cells();
        uint32_t seen = max_total_seen.load(std::memory_order_relaxed);
        while (total > seen && !max_total_seen.compare_exchange_weak(seen, total)) {
        }
      }
      producers_done.fetch_add(1);
    });
  }
  for (uint32_t c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      CellCache cache(buffer_->pool());
      std::vector<std::byte> out(1500);
      while (!filled.load() && producers_done.load() < kProducers)
        std::this_thread::yield();
      // Consumer c owns ports c, c + kConsumers, ... like one egress worker per port.
      for (;;) {
        const bool finished = producers_done.load() == kProducers;
        bool any = false;
        for (uint32_t port = c; port < kPorts; port += kConsumers) {
          for (uint32_t k = 0; k < 2; ++k) {
            const uint32_t q = buffer_->layout().queue_id(port, k);
            const size_t n = buffer_->dequeue_copy(cache, q, out);
            if (n == 0) continue;
            any = true;
            dequeued.fetch_add(1, std::memory_order_relaxed);
            FrameHeader h;
            std::memcpy(&h, out.data(), sizeof h);
            if (h.bytes != n || h.producer >= kProducers ||
                h.checksum != payload_checksum(out.data() + sizeof h, n - sizeof h)) {
              corrupt.fetch_add(1);
            }
          }
        }
        if (!any && finished) break;
        if (!any) std::this_thread::yield();
      }
    });
  }
  for (auto& t : threads)
    t.join();

  EXPECT_EQ(corrupt.load(), 0u);
  EXPECT_EQ(enqueued.load(), dequeued.load());
  EXPECT_GT(enqueued.load(), 0u);
  uint64_t received = 0;
  uint64_t pool_full = 0;
  for (uint32_t q = 0; q < queues; ++q) {
    received += buffer_->stats(q).received_pkts.load();
    pool_full += buffer_->stats(q).dropped(DropReason::kPoolFull);
  }
  EXPECT_EQ(received, uint64_t{kProducers} * kFramesPerProducer);
  EXPECT_EQ(received, enqueued.load() + pool_full);
  // free + sum(queue occupancy) == B.
  uint64_t occupancy = 0;
  for (uint32_t q = 0; q < queues; ++q)
    occupancy += buffer_->state().queue_cells(q);
  EXPECT_EQ(buffer_->state().free_cells() + occupancy, 3000u);
  // No counter ever exceeded B.
  EXPECT_LE(buffer_->state().peak_total_cells(), 3000u);
  EXPECT_LE(max_total_seen.load(), 3000u);
  for (uint32_t q = 0; q < queues; ++q)
    EXPECT_LE(buffer_->state().peak_queue_cells(q), 3000u);
  for (uint32_t p = 0; p < kPorts; ++p)
    EXPECT_LE(buffer_->state().peak_port_cells(p), 3000u);
  // The buffer was really contended: it filled up and refused frames.
  EXPECT_GT(pool_full, 0u);
  // TearDown checks the remaining identities and that every cell is back in the pool.
}

}  // namespace
}  // namespace sharebuf::buffer

#include "buffer/cell_pool.h"

#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sharebuf::buffer {
namespace {

std::vector<std::byte> pattern(size_t n, uint32_t seed) {
  std::vector<std::byte> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::byte>(x);
  }
  return v;
}

uint32_t chain_length(const CellPool& pool, uint32_t head) {
  uint32_t n = 0;
  for (uint32_t c = head; c != kNoCell; c = pool.next_cell(c))
    ++n;
  return n;
}

class CellPoolRoundTrip : public ::testing::TestWithParam<uint32_t> {};

// Every frame size from 1 to 9216 bytes comes back byte-exact, in a chain of exactly
// ceil(size / cell_bytes) cells.
TEST_P(CellPoolRoundTrip, EverySizeIsByteExact) {
  const uint32_t cell_bytes = GetParam();
  CellPool pool({.accounted_cells = 2000, .cell_bytes = cell_bytes});
  CellCache cache(pool);
  std::vector<std::byte> out(9216 + 64);
  for (uint32_t size = 1; size <= 9216; ++size) {
    const auto frame = pattern(size, size);
    const uint32_t head = pool.write_frame(cache, frame);
    ASSERT_NE(head, kNoCell) << "size " << size;
    const uint32_t cells = (size + cell_bytes - 1) / cell_bytes;
    ASSERT_EQ(pool.descriptor(head).cells, cells) << "size " << size;
    ASSERT_EQ(pool.descriptor(head).bytes, size);
    ASSERT_EQ(chain_length(pool, head), cells) << "size " << size;
    std::fill(out.begin(), out.end(), std::byte{0xee});
    ASSERT_EQ(pool.read_frame(head, out), size);
    ASSERT_EQ(std::memcmp(out.data(), frame.data(), size), 0) << "size " << size;
    ASSERT_EQ(out[size], std::byte{0xee}) << "wrote past the frame, size " << size;
    pool.free_frame(cache, head);
  }
  cache.flush_all();
  EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
}

INSTANTIATE_TEST_SUITE_P(CellSizes, CellPoolRoundTrip, ::testing::Values(80u, 16u, 256u));

TEST(CellPool, PhysicalCapacityCoversEveryCache) {
  CellPool pool({.accounted_cells = 1000, .cell_bytes = 80, .max_caches = 4, .cache_cells = 64});
  EXPECT_EQ(pool.physical_cells(), 1000u + 4u * 64u);
  EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
}

// Running out is a clear failure (kNoCell), changes nothing, and corrupts no stored frame.
TEST(CellPool, ExhaustionFailsCleanlyAndCorruptsNothing) {
  CellPool pool({.accounted_cells = 100, .cell_bytes = 80, .max_caches = 1, .cache_cells = 4});
  ASSERT_EQ(pool.physical_cells(), 104u);
  CellCache cache(pool);
  std::vector<std::pair<uint32_t, std::vector<std::byte>>> frames;
  for (uint32_t i = 0;; ++i) {
    auto data = pattern(800, i);  // 10 cells
    const uint32_t head = pool.write_frame(cache, data);
    if (head == kNoCell) break;
    frames.emplace_back(head, std::move(data));
    ASSERT_LT(i, 100u) << "the pool never ran out";
  }
  EXPECT_EQ(frames.size(), 10u);
  EXPECT_EQ(pool.free_cells_approx(), 4u);
  // A frame that still fits succeeds after the failure.
  auto small = pattern(300, 999);  // 4 cells
  const uint32_t small_head = pool.write_frame(cache, small);
  ASSERT_NE(small_head, kNoCell);
  EXPECT_EQ(pool.write_frame(cache, pattern(1, 1)), kNoCell);
  std::vector<std::byte> out(800);
  for (const auto& [head, data] : frames) {
    ASSERT_EQ(pool.read_frame(head, out), data.size());
    EXPECT_EQ(std::memcmp(out.data(), data.data(), data.size()), 0);
    pool.free_frame(cache, head);
  }
  pool.free_frame(cache, small_head);
  cache.flush_all();
  EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
}

// A frame longer than a cache holds is served partly from the cache and partly straight from
// the global stack.
TEST(CellPool, FrameLargerThanTheCache) {
  CellPool pool({.accounted_cells = 1000, .cell_bytes = 16, .max_caches = 2, .cache_cells = 8});
  CellCache cache(pool);
  const auto frame = pattern(9000, 7);  // 563 cells
  const uint32_t head = pool.write_frame(cache, frame);
  ASSERT_NE(head, kNoCell);
  EXPECT_EQ(chain_length(pool, head), 563u);
  std::vector<std::byte> out(9000);
  ASSERT_EQ(pool.read_frame(head, out), 9000u);
  EXPECT_EQ(out, frame);
  pool.free_frame(cache, head);
  EXPECT_LE(cache.held_approx(), 8u);
  cache.flush_all();
  EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
}

TEST(CellPool, CachesFlushOnDestructionAndAreBounded) {
  CellPool pool({.accounted_cells = 100, .cell_bytes = 80, .max_caches = 2, .cache_cells = 16});
  {
    CellCache a(pool);
    CellCache b(pool);
    EXPECT_EQ(pool.caches_in_use(), 2u);
    EXPECT_THROW(CellCache c(pool), std::runtime_error);
    uint32_t cells[3];
    ASSERT_TRUE(a.alloc(cells, 3));
    for (uint32_t c : cells)
      b.free(c);  // freed by another thread's cache: allowed
    EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
  }
  EXPECT_EQ(pool.caches_in_use(), 0u);
  EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
}

// The control thread counts free cells while workers create their caches (sharebufd starts its
// threads while `status` may already be asked). A cache is visible to that count only once it is
// whole; under ThreadSanitizer a cache registered before its counter was constructed is a race.
TEST(CellPool, CountsFreeCellsWhileAnotherThreadCreatesItsCache) {
  CellPool pool({.accounted_cells = 100, .cell_bytes = 80, .max_caches = 2, .cache_cells = 16});
  std::atomic<bool> done{false};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> sink{0};
  std::thread reader([&] {
    // Approximate while the other thread moves cells (it may count a cell twice): only read.
    while (!done.load(std::memory_order_relaxed)) {
      sink.fetch_add(pool.free_cells_approx(), std::memory_order_relaxed);
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  while (reads.load() == 0)  // the reader is counting before the first cache appears
    std::this_thread::yield();
  bool allocated = true;
  for (int i = 0; i < 2000 && allocated; ++i) {
    CellCache cache(pool);
    uint32_t cell;
    allocated = cache.alloc(&cell, 1);
    if (allocated) cache.free(cell);
  }
  done = true;
  reader.join();
  EXPECT_TRUE(allocated);
  EXPECT_EQ(pool.free_cells_approx(), pool.physical_cells());
}

TEST(CellPool, RejectsBadOptions) {
  EXPECT_THROW(CellPool({.accounted_cells = 0}), std::invalid_argument);
  EXPECT_THROW(CellPool({.accounted_cells = 10, .cell_bytes = 8}), std::invalid_argument);
}

}  // namespace
}  // namespace sharebuf::buffer

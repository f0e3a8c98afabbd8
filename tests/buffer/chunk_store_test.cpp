// Frames that stay in the chunk they were received into (a shared AF_XDP UMEM): the cell pool
// accounts them in cells without copying, reads and frees them through the chunk store, and
// trades chunks with an egress slot (buffer/cell_pool.h, buffer/chunk_store.h).
#include "buffer/chunk_store.h"

#include <cstring>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/cell_pool.h"

namespace sharebuf::buffer {
namespace {

constexpr uint32_t kChunk = 2048;

class ChunkedPool : public ::testing::Test {
 protected:
  ChunkedPool() : area_(kChunk * 8), store_(area_.data(), kChunk, 8) {
    for (uint32_t i = 0; i < 8; ++i)
      store_.give(uint64_t{i} * kChunk);
    pool_.attach_chunks(&store_);
  }
  // A "received" frame of `n` bytes in a chunk taken from the store, 256 bytes in.
  std::span<const std::byte> receive(size_t n, uint8_t fill) {
    uint64_t off = 0;
    EXPECT_TRUE(store_.take(&off));
    std::byte* p = area_.data() + off + 256;
    std::memset(p, fill, n);
    return {p, n};
  }

  std::vector<std::byte> area_;
  ChunkStore store_;
  CellPool pool_{CellPool::Options{.accounted_cells = 100, .cell_bytes = 80, .max_caches = 2}};
};

TEST_F(ChunkedPool, AnOfferedFrameStaysInItsChunkAndIsAccountedInCells) {
  CellCache cache(pool_);
  const auto frame = receive(300, 0xab);
  ChunkOffer offer{.begin = frame.data(), .len = frame.size()};
  cache.offer = &offer;
  const uint32_t free_before = store_.free_approx();
  const uint32_t head = pool_.write_frame(cache, frame);
  ASSERT_NE(head, kNoCell);
  EXPECT_TRUE(offer.taken);
  EXPECT_TRUE(pool_.in_chunk(head));
  EXPECT_EQ(pool_.descriptor(head).cells, 4u);       // 300 B in 80-byte cells
  EXPECT_EQ(store_.free_approx(), free_before - 1);  // the refill for the receive side
  // Not copied: a change to the chunk is what a read gives.
  std::memset(const_cast<std::byte*>(frame.data()), 0xcd, 10);
  std::vector<std::byte> out(300);
  EXPECT_EQ(pool_.read_frame(head, out), 300u);
  EXPECT_EQ(out[0], std::byte{0xcd});
  EXPECT_EQ(out[299], std::byte{0xab});
  // A second write of the same bytes (another copy) is copied: one write takes an offer.
  const uint32_t copy = pool_.write_frame(cache, frame);
  ASSERT_NE(copy, kNoCell);
  EXPECT_FALSE(pool_.in_chunk(copy));
  pool_.free_frame(cache, copy);
  // Freeing the frame gives its chunk back.
  pool_.free_frame(cache, head);
  EXPECT_FALSE(pool_.in_chunk(head));
  EXPECT_EQ(store_.free_approx(), free_before);
  cache.offer = nullptr;
}

TEST_F(ChunkedPool, FramesOutsideTheOfferOrWithoutASpareChunkAreCopied) {
  CellCache cache(pool_);
  const auto frame = receive(100, 1);
  std::vector<std::byte> elsewhere(frame.begin(), frame.end());  // a rebuilt frame (VLAN tag)
  ChunkOffer offer{.begin = frame.data(), .len = frame.size()};
  cache.offer = &offer;
  const uint32_t a = pool_.write_frame(cache, elsewhere);
  EXPECT_FALSE(pool_.in_chunk(a));
  EXPECT_FALSE(offer.taken);
  // No chunk left for the receive side: copied, nothing taken.
  uint64_t off = 0;
  std::vector<uint64_t> held;
  while (store_.take(&off))
    held.push_back(off);
  const uint32_t b = pool_.write_frame(cache, frame);
  EXPECT_FALSE(pool_.in_chunk(b));
  EXPECT_FALSE(offer.taken);
  pool_.free_frame(cache, a);
  pool_.free_frame(cache, b);
  EXPECT_EQ(store_.free_approx(), 0u);
  cache.offer = nullptr;
}

TEST_F(ChunkedPool, SwapTradesTheFramesChunkForTheSlotsAndFreesTheSlots) {
  CellCache cache(pool_);
  const auto frame = receive(200, 7);
  ChunkOffer offer{.begin = frame.data(), .len = frame.size()};
  cache.offer = &offer;
  const uint32_t head = pool_.write_frame(cache, frame);
  cache.offer = nullptr;
  ASSERT_TRUE(pool_.in_chunk(head));
  uint64_t slot_off = 0;
  ASSERT_TRUE(store_.take(&slot_off));
  std::byte* slot = area_.data() + slot_off + 256;
  std::vector<std::byte> outside(kChunk);
  EXPECT_EQ(pool_.swap_chunk(head, outside.data()), nullptr);  // not the store's memory
  EXPECT_EQ(pool_.swap_chunk(head, slot), frame.data());
  const uint32_t free_before = store_.free_approx();
  pool_.free_frame(cache, head);
  EXPECT_EQ(store_.free_approx(), free_before + 1);
  // What came back is the slot's chunk, not the frame's (which is on its way out).
  std::set<uint64_t> free;
  uint64_t off = 0;
  while (store_.take(&off))
    free.insert(off);
  EXPECT_EQ(free.count(slot_off), 1u);
  EXPECT_EQ(free.count(static_cast<uint64_t>(frame.data() - area_.data()) & ~uint64_t{kChunk - 1}),
            0u);
}

TEST(ChunkStoreTest, HoldsOnlyRangesInsideOneChunk) {
  std::vector<std::byte> area(4 * kChunk);
  ChunkStore store(area.data(), kChunk, 4);
  EXPECT_TRUE(store.holds(area.data() + 256, kChunk - 256));
  EXPECT_FALSE(store.holds(area.data() + 256, kChunk - 255));  // into the next chunk
  EXPECT_FALSE(store.holds(area.data() + 4 * kChunk, 1));
  EXPECT_EQ(store.data(store.token(area.data() + 5000)), area.data() + 5000);
  EXPECT_THROW(ChunkStore(area.data(), 3000, 4), std::invalid_argument);
}

}  // namespace
}  // namespace sharebuf::buffer

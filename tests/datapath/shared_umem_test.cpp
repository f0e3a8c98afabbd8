// The RX and egress workers over in-memory ports whose frames arrive in, and leave from, chunks of
// one shared area (an AF_XDP shared UMEM; MemoryPort::use_chunks): unicast frames stay queued in
// their chunks and leave from them, flooded ones are copied, the bytes that leave are the bytes
// that came, and every chunk is back where it belongs when the switch is quiet (none lost to a
// drop, a push-out or a send, none handed out twice).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/chunk_store.h"
#include "tests/datapath/memory_switch.h"

namespace sharebuf::testing {
namespace {

constexpr uint32_t kChunk = 2048;

struct Area {
  explicit Area(uint32_t chunks)
      : bytes(size_t{kChunk} * chunks), store(bytes.data(), kChunk, chunks) {
    for (uint32_t i = 0; i < chunks; ++i)
      store.give(uint64_t{i} * kChunk);
  }
  std::vector<std::byte> bytes;
  buffer::ChunkStore store;
};

std::string config(const std::string& policy, const std::string& size, uint32_t tx_batch) {
  std::string t = "[policy]\nname = \"" + policy +
                  "\"\n[switch]\nrx_park_after = 0\n[buffer]\nsize = \"" + size + "\"\n";
  for (int i = 0; i < 3; ++i)
    t += "[[ports]]\ninterface = \"m" + std::to_string(i) +
         "\"\ntx_batch = " + std::to_string(tx_batch) + "\n";
  return t;
}

// Hosts 1, 2, 3 behind m0, m1, m2, learnt by one frame each (flooded, so copied).
void learn(MemorySwitch& sw) {
  for (uint8_t h = 1; h <= 3; ++h) {
    ASSERT_TRUE(sw.port(h - 1).inject(udp_frame(h, 9)));
    ASSERT_TRUE(eventually([&] { return sw.counters(h - 1).rx_frames.load() == 1; }));
  }
  ASSERT_TRUE(eventually([&] { return sw.quiet(); }));
}

TEST(SharedUmem, UnicastFramesStayInTheirChunksAndLeaveFromThem) {
  Area area(4096);
  MemorySwitch sw(config("cs", "4000 cells", 16));
  sw.use_chunks(area.store);
  const uint32_t free_at_start = area.store.free_approx();  // less the staging slots
  sw.start();
  learn(sw);
  EXPECT_EQ(sw.counters(0).rx_kept_in_chunk.load(), 0u) << "a flooded frame stayed in its chunk";
  const size_t sent_before = sw.port(1).sent_count();
  const auto frames = numbered(500, 900);
  for (size_t i = 0; i < frames.size(); i += 50) {  // a burst at a time: nothing refused
    ASSERT_EQ(sw.port(0).inject_burst({frames.begin() + i, frames.begin() + i + 50}), 50u);
    ASSERT_TRUE(eventually([&] { return sw.port(1).sent_count() == sent_before + i + 50; }));
  }
  ASSERT_TRUE(eventually([&] { return sw.port(1).sent_count() == sent_before + 500; }));
  ASSERT_TRUE(eventually([&] { return sw.quiet(); }));
  sw.stop();
  const auto sent = sw.port(1).sent();
  for (size_t i = 0; i < frames.size(); ++i)
    ASSERT_EQ(sent.at(sent_before + i), frames[i]) << "frame " << i << " changed on its way";
  EXPECT_EQ(sw.counters(0).rx_kept_in_chunk.load(), 500u);
  EXPECT_EQ(sw.counters(1).tx_from_chunk.load(), 500u);
  EXPECT_EQ(area.store.free_approx(), free_at_start) << "chunks lost or handed out twice";
}

TEST(SharedUmem, ChunksBalanceUnderDropsPushOutAndTwoReceivers) {
  // Two ports into one through a small buffer with LQD: refusals and push-outs on both RX
  // threads while the egress thread sends.
  Area area(8192);
  MemorySwitch sw(config("lqd", "300 cells", 8));
  sw.use_chunks(area.store);
  const uint32_t free_at_start = area.store.free_approx();
  sw.start();
  learn(sw);
  std::vector<std::vector<uint8_t>> a, b;
  for (uint16_t i = 0; i < 200; ++i) {
    a.push_back(udp_frame(1, 3, 1200, i));
    b.push_back(udp_frame(2, 3, 300, static_cast<uint16_t>(1000 + i)));
  }
  const size_t sent_before = sw.port(2).sent_count();
  for (int round = 0; round < 10; ++round) {
    sw.port(0).inject_burst(a);
    sw.port(1).inject_burst(b);
  }
  ASSERT_TRUE(eventually([&] { return sw.quiet(); }));
  sw.stop();
  // Whatever left is a frame that came in, unchanged.
  std::vector<std::vector<uint8_t>> all(a);
  all.insert(all.end(), b.begin(), b.end());
  uint64_t checked = 0;
  const auto sent = sw.port(2).sent();
  for (size_t i = sent_before; i < sent.size(); ++i) {
    const auto& f = sent[i];
    const uint16_t n = frame_number(f);
    const auto& want = n >= 1000 ? b.at(n - 1000) : a.at(n);
    ASSERT_EQ(f, want) << "frame " << n << " changed on its way";
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  const uint64_t kept =
      sw.counters(0).rx_kept_in_chunk.load() + sw.counters(1).rx_kept_in_chunk.load();
  EXPECT_GT(kept, 0u);
  EXPECT_GT(sw.counters(2).tx_from_chunk.load(), 0u);
  EXPECT_LE(sw.counters(2).tx_from_chunk.load(), kept);
  EXPECT_EQ(area.store.free_approx(), free_at_start) << "chunks lost or handed out twice";
}

}  // namespace
}  // namespace sharebuf::testing

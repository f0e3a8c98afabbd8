// Queue push + pop: the SpinLock intrusive queue sharebuf uses, the same queue under std::mutex,
// and a std::deque under std::mutex. With 2 threads both push and pop the same queue, the worst
// case of RX workers and the egress worker meeting on one queue.
#include <deque>
#include <mutex>

#include <benchmark/benchmark.h>

#include "buffer/packet_queue.h"

namespace sharebuf::buffer {
namespace {

CellPool& pool() {
  static CellPool p({.accounted_cells = 1 << 16, .cell_bytes = 80, .max_caches = 16});
  return p;
}

template <typename Queue>
void BM_QueuePushPop(benchmark::State& state) {
  static Queue queue(&pool());
  CellCache cache(pool());
  uint32_t cells[16];
  cache.alloc(cells, 16);
  for (uint32_t c : cells)
    pool().descriptor(c).cells = 1;
  for (auto _ : state) {
    for (uint32_t c : cells)
      queue.push(c);
    for (uint32_t& c : cells) {
      c = queue.pop_head();
      // With two threads a pop may take the other thread's frame; both keep 16 in flight.
      while (c == kNoCell)
        c = queue.pop_head();
    }
    benchmark::DoNotOptimize(cells);
  }
  for (uint32_t c : cells)
    cache.free(c);
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK_TEMPLATE(BM_QueuePushPop, PacketQueue)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_TEMPLATE(BM_QueuePushPop, BasicPacketQueue<std::mutex>)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

struct MutexDeque {
  explicit MutexDeque(CellPool*) {}
  std::mutex mu;
  std::deque<uint32_t> q;
  void push(uint32_t c) {
    std::lock_guard g(mu);
    q.push_back(c);
  }
  uint32_t pop_head() {
    std::lock_guard g(mu);
    if (q.empty()) return kNoCell;
    const uint32_t c = q.front();
    q.pop_front();
    return c;
  }
};
BENCHMARK_TEMPLATE(BM_QueuePushPop, MutexDeque)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace sharebuf::buffer

// Cell pool: one-cell alloc/free through a per-thread cache, beside a global free list under a
// std::mutex (the baseline a cache exists to beat); and whole-frame write/free.
#include <mutex>
#include <vector>

#include <benchmark/benchmark.h>

#include "buffer/cell_pool.h"

namespace sharebuf::buffer {
namespace {

CellPool& shared_pool() {
  static CellPool pool({.accounted_cells = 1 << 16, .cell_bytes = 80, .max_caches = 16});
  return pool;
}

void BM_CellCacheAllocFree(benchmark::State& state) {
  CellCache cache(shared_pool());
  uint32_t cells[8];
  for (auto _ : state) {
    cache.alloc(cells, 8);
    benchmark::DoNotOptimize(cells);
    for (uint32_t c : cells)
      cache.free(c);
  }
  state.SetItemsProcessed(state.iterations() * 8);
}
BENCHMARK(BM_CellCacheAllocFree)->Threads(1)->Threads(2)->UseRealTime();

// Baseline: every alloc and free takes one global lock.
struct MutexFreeList {
  std::mutex mu;
  std::vector<uint32_t> cells;
  MutexFreeList() {
    for (uint32_t i = 0; i < (1 << 16); ++i)
      cells.push_back(i);
  }
};

void BM_MutexFreeListAllocFree(benchmark::State& state) {
  static MutexFreeList list;
  uint32_t cells[8];
  for (auto _ : state) {
    for (uint32_t& c : cells) {
      std::lock_guard g(list.mu);
      c = list.cells.back();
      list.cells.pop_back();
    }
    benchmark::DoNotOptimize(cells);
    for (uint32_t c : cells) {
      std::lock_guard g(list.mu);
      list.cells.push_back(c);
    }
  }
  state.SetItemsProcessed(state.iterations() * 8);
}
BENCHMARK(BM_MutexFreeListAllocFree)->Threads(1)->Threads(2)->UseRealTime();

void BM_WriteFreeFrame(benchmark::State& state) {
  CellCache cache(shared_pool());
  std::vector<std::byte> frame(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    const uint32_t head = shared_pool().write_frame(cache, frame);
    benchmark::DoNotOptimize(head);
    shared_pool().free_frame(cache, head);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_WriteFreeFrame)->Arg(64)->Arg(1500)->Arg(9000);

}  // namespace
}  // namespace sharebuf::buffer

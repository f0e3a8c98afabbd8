// Cost of one admission decision per policy, through the virtual interface as the RX path calls
// it, on a buffer that is partly full. "Decide" reads only; "DecideReserveRelease" also moves the
// counters, and with 2 threads on the same queues shows the cost of the shared cache lines.
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "buffer/buffer_state.h"
#include "policies/registry.h"

namespace sharebuf::policies {
namespace {

struct Fixture {
  buffer::BufferLayout layout{21000, 80, std::vector<buffer::PortSpec>(4, {.num_queues = 8})};
  buffer::BufferState state{layout};
  PolicyEnv env{.layout = &layout};
  std::unique_ptr<Policy> cs = make_policy("cs", Params{}, env);
  std::unique_ptr<Policy> st = make_policy("static", Params{}, env);
  std::unique_ptr<Policy> dt = make_policy("dt", Params{}, env);
  Fixture() {
    for (uint32_t q = 0; q < layout.num_queues(); q += 3)
      state.try_reserve(q, 300);
  }
  Policy& get(int64_t i) { return i == 0 ? *cs : i == 1 ? *st : *dt; }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

const char* kNames[] = {"cs", "static", "dt"};

void BM_Decide(benchmark::State& state) {
  Fixture& f = fixture();
  Policy& policy = f.get(state.range(0));
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(kNames[state.range(0)]);
  uint32_t q = 0;
  for (auto _ : state) {
    const Verdict v = policy.admit(ArrivalContext{.queue = q, .cells = 1, .bytes = 64}, view);
    benchmark::DoNotOptimize(v);
    q = (q + 1) & 31;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Decide)->DenseRange(0, 2)->Threads(1)->Threads(2)->UseRealTime();

void BM_DecideReserveRelease(benchmark::State& state) {
  Fixture& f = fixture();
  Policy& policy = f.get(state.range(0));
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(kNames[state.range(0)]);
  uint32_t q = 0;
  for (auto _ : state) {
    const Verdict v = policy.admit(ArrivalContext{.queue = q, .cells = 1, .bytes = 64}, view);
    if (v.accepted() && f.state.try_reserve(q, 1)) f.state.release(q, 1);
    q = (q + 1) & 3;  // both threads on the same four queues
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecideReserveRelease)->DenseRange(0, 2)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace sharebuf::policies

// Cost of one admission decision per policy, through the virtual interface as the RX path calls
// it, on a buffer that is partly full. "Decide" reads only; "DecideReserveRelease" also moves the
// counters, and with 2 threads on the same queues shows the cost of the shared cache lines.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "buffer/buffer_state.h"
#include "policies/registry.h"

namespace sharebuf::policies {
namespace {

// Every built-in policy with its defaults, on 4 ports x 8 queues, a third of the queues holding
// 300 cells (policies that push out see a buffer with room, the common case).
struct Fixture {
  buffer::BufferLayout layout{21000, 80, std::vector<buffer::PortSpec>(4, {.num_queues = 8})};
  buffer::BufferState state{layout};
  PolicyEnv env{.layout = &layout};
  std::vector<std::unique_ptr<Policy>> policies;
  Fixture() {
    for (const PolicyInfo& info : builtin_policies())
      policies.push_back(info.make(Params{}, env));
    for (uint32_t q = 0; q < layout.num_queues(); q += 3)
      state.try_reserve(q, 300);
  }
  Policy& get(int64_t i) { return *policies[static_cast<size_t>(i)]; }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// The registry is a constant-initialised array, so its size is known at static-init time.
const int kLastPolicy = static_cast<int>(builtin_policies().size()) - 1;

void BM_Decide(benchmark::State& state) {
  Fixture& f = fixture();
  Policy& policy = f.get(state.range(0));
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(std::string(policy.name()));
  uint32_t q = 0;
  for (auto _ : state) {
    const Verdict v = policy.admit(ArrivalContext{.queue = q, .cells = 1, .bytes = 64}, view);
    benchmark::DoNotOptimize(v);
    q = (q + 1) & 31;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Decide)->DenseRange(0, kLastPolicy)->Threads(1)->Threads(2)->UseRealTime();

// The same with a flow hash on every frame, 1024 flows in turn, as a live switch's TCP and UDP
// frames carry: what the flow tables of ABM and FAB cost (BM_Decide's frames have none).
void BM_DecideFlows(benchmark::State& state) {
  Fixture& f = fixture();
  Policy& policy = f.get(state.range(0));
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(std::string(policy.name()));
  uint32_t q = 0, flow = 0;
  uint64_t now = 0;
  for (auto _ : state) {
    const Verdict v = policy.admit(
        ArrivalContext{.now_ns = now, .queue = q, .cells = 1, .bytes = 64, .flow_hash = flow + 1},
        view);
    benchmark::DoNotOptimize(v);
    q = (q + 1) & 31;
    flow = (flow + 1) & 1023;
    now += 100;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecideFlows)->DenseRange(0, kLastPolicy)->Threads(1)->UseRealTime();

// As the RX workers call it: decisions in a burst bracketed by begin_burst()/end_burst(), so a
// policy with one lock (Credence) takes it once per burst. An RX worker's burst is whatever its
// ring holds, at most RxWorker::kBurst (64); 32 here. Returns the next queue.
constexpr int kBurst = 32;
uint32_t decide_burst(Policy& policy, const buffer::BufferView& view, uint32_t q) {
  policy.begin_burst();
  for (int i = 0; i < kBurst; ++i) {
    const Verdict v = policy.admit(ArrivalContext{.queue = q, .cells = 1, .bytes = 64}, view);
    benchmark::DoNotOptimize(v);
    q = (q + 1) & 31;
  }
  policy.end_burst();
  return q;
}

// Time per decision, bursts as above.
void BM_DecideBurst(benchmark::State& state) {
  Fixture& f = fixture();
  Policy& policy = f.get(state.range(0));
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(std::string(policy.name()));
  uint32_t q = 0;
  for (auto _ : state) {
    q = decide_burst(policy, view, q);
  }
  state.SetItemsProcessed(state.iterations() * kBurst);
}
BENCHMARK(BM_DecideBurst)->DenseRange(0, kLastPolicy)->Threads(1)->Threads(2)->UseRealTime();

// The index of a built-in policy by name (the registry is known at static-init time).
int64_t policy_index(std::string_view name) {
  const auto all = builtin_policies();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name) return static_cast<int64_t>(i);
  return 0;
}

// What bounds two threads on one exact Credence, measured: bursts of 32 decisions as above, then
// range(1) steps of other per-frame work per decision outside the policy's lock, as an RX worker
// sends its burst after end_burst(). With a serialised part s per decision and other work w, two
// threads cost each max(2s, s + w) per decision against s + w for one: 2x with no other work,
// 1.5x at w = s/3, 1x from w = s (docs/datapath-latency.md). One step is a 64-bit multiply-add
// (its latency, a few cycles); the one-thread rows give w in ns.
void BM_DecideBurstThenWork(benchmark::State& state) {
  Fixture& f = fixture();
  Policy& policy = f.get(state.range(0));
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(std::string(policy.name()));
  const int64_t steps = state.range(1) * kBurst;
  uint64_t x = static_cast<uint64_t>(state.thread_index()) + 1;
  uint32_t q = 0;
  for (auto _ : state) {
    q = decide_burst(policy, view, q);
    for (int64_t i = 0; i < steps; ++i)
      x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations() * kBurst);
}
BENCHMARK(BM_DecideBurstThenWork)
    ->ArgsProduct({{policy_index("dt"), policy_index("credence")}, {0, 2, 8, 32, 128}})
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// Credence with `pipelines` = range(0) (docs/policies/credence.md): each thread's arrivals come
// from its own in_port, so with 2 pipelines the two threads decide on their own pipelines' state
// and read each other's Gamma once per burst; with 1 it is BM_DecideBurst's exact Credence (one
// order for all decisions). Two threads against one is the cost of deciding in parallel. Range 0:
// each thread decides on a Credence instance of its own (nothing shared but the buffer's
// counters, which only the caller writes): the floor of that ratio on this machine.
void BM_DecideBurstPipelines(benchmark::State& state) {
  Fixture& f = fixture();
  static const std::unique_ptr<Policy> by_count[3] = {
      make_policy("credence", Params{}, f.env),
      make_policy("credence", Params{.values = {{"pipelines", 1}}}, f.env),
      make_policy("credence", Params{.values = {{"pipelines", 2}}}, f.env)};
  static const std::unique_ptr<Policy> second = make_policy("credence", Params{}, f.env);
  Policy& policy =
      state.range(0) == 0 && state.thread_index() == 1 ? *second : *by_count[state.range(0)];
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(state.range(0) == 0 ? std::string("credence, an instance per thread")
                                     : "credence, pipelines " + std::to_string(state.range(0)));
  const auto in_port = static_cast<uint16_t>(state.thread_index());
  uint32_t q = 0;
  for (auto _ : state) {
    policy.begin_burst();
    for (int i = 0; i < kBurst; ++i) {
      const Verdict v = policy.admit(
          ArrivalContext{.queue = q, .in_port = in_port, .cells = 1, .bytes = 64}, view);
      benchmark::DoNotOptimize(v);
      q = (q + 1) & 31;
    }
    policy.end_burst();
  }
  state.SetItemsProcessed(state.iterations() * kBurst);
}
BENCHMARK(BM_DecideBurstPipelines)->DenseRange(0, 2)->Threads(1)->Threads(2)->UseRealTime();

// A reclaiming policy (Occamy) as the admission step calls it: reclaim() at the frame's time, then
// admit(). Arrivals 100 ns apart keep the bucket filling, so every reclaim looks for a victim; in
// the fixture no queue is over its threshold, so each look scans every queue (the worst case: an
// over-threshold queue ends the scan where it is found). Range(1): 1 = the fixture's 300-cell
// queues are over their threshold (alpha 1/64); the dropper then reports a 1500-byte frame (19
// cells) dropped without changing the buffer, so the bucket (4 ports: 6.25 cells per 100 ns)
// pays for a head drop about every third arrival.
void BM_DecideWithReclaim(benchmark::State& state) {
  Fixture& f = fixture();
  const PolicyEnv env{.layout = &f.layout};
  Params params;
  if (state.range(1) == 1) params.values = {{"alpha", 1.0 / 64}};
  const std::unique_ptr<Policy> policy = make_policy("occamy", params, env);
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(state.range(1) == 1 ? "occamy, queues over" : "occamy, none over");
  auto drop_head = [](void*, uint32_t) noexcept -> Policy::HeadDrop { return {19, 1500}; };
  uint32_t q = 0;
  uint64_t now = 0;
  for (auto _ : state) {
    now += 100;
    policy->reclaim(now, view, drop_head, nullptr);
    const Verdict v =
        policy->admit(ArrivalContext{.now_ns = now, .queue = q, .cells = 1, .bytes = 64}, view);
    benchmark::DoNotOptimize(v);
    q = (q + 1) & 31;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecideWithReclaim)->ArgsProduct({{0}, {0, 1}})->Threads(1)->UseRealTime();

void BM_DecideReserveRelease(benchmark::State& state) {
  Fixture& f = fixture();
  Policy& policy = f.get(state.range(0));
  const auto view = buffer::BufferView::exact(f.state);
  state.SetLabel(std::string(policy.name()));
  uint32_t q = 0;
  for (auto _ : state) {
    const Verdict v = policy.admit(ArrivalContext{.queue = q, .cells = 1, .bytes = 64}, view);
    if (v.accepted() && f.state.try_reserve(q, 1)) f.state.release(q, 1);
    q = (q + 1) & 3;  // both threads on the same four queues
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecideReserveRelease)
    ->DenseRange(0, kLastPolicy)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

}  // namespace
}  // namespace sharebuf::policies

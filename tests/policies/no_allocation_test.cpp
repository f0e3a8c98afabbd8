// admit() must never allocate: this binary replaces the global operator new with a counting one
// and runs every registered policy's admit(), on_enqueue() and on_dequeue() many times.
#include <atomic>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/buffer_state.h"
#include "policies/registry.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// gcc cannot see that these frees pair with the malloc in operator new above.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace sharebuf::policies {
namespace {

TEST(NoAllocation, TheCounterCounts) {
  const uint64_t before = g_allocations.load();
  auto* p = new std::vector<int>(10);
  delete p;
  EXPECT_GE(g_allocations.load() - before, 2u);
}

TEST(NoAllocation, HotPathOfEveryPolicy) {
  const buffer::BufferLayout layout(2000, 80, std::vector<buffer::PortSpec>(2, {.num_queues = 4}));
  buffer::BufferState state(layout);
  PolicyEnv env{.layout = &layout,
                .classes = {TrafficClass{.name = "a"}, TrafficClass{.name = "b",
                                                                    .group = PriorityGroup::kHigh,
                                                                    .role = ProteanRole::kShort}},
                .port_rate_bps = {1'000'000'000, 0}};
  // Every policy with its defaults, and Credence with each oracle that does work per arrival
  // (the shipped forest: 4 trees of depth 4).
  std::vector<std::pair<const PolicyInfo*, Params>> cases;
  for (const PolicyInfo& info : builtin_policies())
    cases.emplace_back(&info, Params{});
  for (const PolicyInfo& info : builtin_policies()) {
    if (info.name != "credence") continue;
    Params forest;
    forest.values = {{"oracle", "forest"}};
    Params flip;
    flip.values = {{"oracle", "flip"}, {"flip_base", "forest"}, {"flip_probability", 0.1}};
    cases.emplace_back(&info, forest);
    cases.emplace_back(&info, flip);
  }
  ASSERT_EQ(cases.size(), builtin_policies().size() + 2);
  for (const auto& [info, params] : cases) {
    auto policy = info->make(params, env);
    const auto view = buffer::BufferView::exact(state);
    const uint64_t before = g_allocations.load();
    for (uint32_t i = 0; i < 20000; ++i) {
      const uint32_t q = i % layout.num_queues();
      const ArrivalContext ctx{.now_ns = 1000 + i * 100ull,
                               .queue = q,
                               .port = static_cast<uint16_t>(layout.port_of(q)),
                               .class_id = static_cast<uint8_t>(i % 2),
                               .cells = 1 + i % 19,
                               .bytes = 80};
      const Verdict v = policy->admit(ctx, view);
      if (v.accepted() && state.try_reserve(q, ctx.cells)) {
        policy->on_enqueue(ctx, view);
      }
      if (i % 3 == 0 && state.queue_cells(q) > 0) {
        const uint32_t c = std::min<uint32_t>(state.queue_cells(q), 5);
        state.release(q, c);
        policy->on_dequeue({.now_ns = ctx.now_ns + 50, .queue = q, .port = ctx.port, .cells = c},
                           view);
      }
    }
    EXPECT_EQ(g_allocations.load() - before, 0u)
        << info->name << " " << params.values.dump() << " allocated on the hot path";
    for (uint32_t q = 0; q < layout.num_queues(); ++q)
      state.release(q, state.queue_cells(q));
  }
}

}  // namespace
}  // namespace sharebuf::policies

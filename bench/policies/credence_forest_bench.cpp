// Credence with the paper's model size, a 4-tree depth-4 random forest, on the path where the
// oracle is consulted: a queue above B/N (the safeguard does not accept) that is under its
// threshold. The forest is random but complete (every tree has 15 inner nodes and 16 leaves), so
// every prediction walks four levels in four trees.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "buffer/buffer_state.h"
#include "policies/credence.h"

namespace sharebuf::policies {
namespace {

nlohmann::json complete_tree(std::mt19937& rng, int depth) {
  nlohmann::json nodes = nlohmann::json::array();
  // Breadth-first: node k's children are 2k+1 and 2k+2, so children follow their parent.
  const int inner = (1 << depth) - 1;
  std::uniform_int_distribution<int> feature(0, kOracleFeatures - 1);
  std::uniform_real_distribution<double> threshold(0, 20000);
  for (int k = 0; k < 2 * inner + 1; ++k) {
    if (k < inner) {
      nodes.push_back({{"feature", feature(rng)},
                       {"threshold", threshold(rng)},
                       {"left", 2 * k + 1},
                       {"right", 2 * k + 2},
                       {"value", 0.0}});
    } else {
      nodes.push_back({{"feature", -1},
                       {"threshold", 0.0},
                       {"left", -1},
                       {"right", -1},
                       {"value", k % 3 / 2.0}});
    }
  }
  return nodes;
}

void BM_CredenceForestDecide(benchmark::State& state) {
  const std::string path = "/tmp/sharebuf-bench-forest-" + std::to_string(getpid()) + ".json";
  {
    std::mt19937 rng(7);
    nlohmann::json model = nlohmann::json::array();
    for (int t = 0; t < 4; ++t)
      model.push_back(complete_tree(rng, 4));
    std::ofstream(path) << model.dump();
  }
  const buffer::BufferLayout layout(21000, 80, std::vector<buffer::PortSpec>(4, {.num_queues = 8}));
  buffer::BufferState buffer_state(layout);
  const PolicyEnv env{.layout = &layout};
  Params params;
  params.values = {{"oracle", "forest"}, {"model", path}};
  CredencePolicy credence(params, env);
  std::remove(path.c_str());
  // Every queue at 600 cells and queue 0 above B/N = 657, so the safeguard does not accept; the
  // thresholds start at the occupancy and grow with the arrivals (LQD keeps them near B/N = 656
  // once Gamma reaches B), so Q < T holds and the oracle decides every frame.
  for (uint32_t q = 0; q < layout.num_queues(); ++q)
    buffer_state.try_reserve(q, 600);
  const auto view = buffer::BufferView::exact(buffer_state);
  credence.on_install(view);
  buffer_state.try_reserve(0, 100);
  uint32_t q = 0;
  uint64_t now = 1;
  for (auto _ : state) {
    const Verdict v = credence.admit(ArrivalContext{.now_ns = now, .queue = q, .cells = 1}, view);
    benchmark::DoNotOptimize(v);
    q = (q + 1) & 31;
    now += 100;
  }
  state.SetLabel("credence forest 4x depth 4, oracle consulted");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CredenceForestDecide)->UseRealTime();

}  // namespace
}  // namespace sharebuf::policies

namespace sharebuf::policies {
namespace {

void BM_ForestScore(benchmark::State& state) {
  std::mt19937 rng(7);
  nlohmann::json model = nlohmann::json::array();
  for (int t = 0; t < 4; ++t)
    model.push_back(complete_tree(rng, 4));
  const RandomForest forest = RandomForest::from_json(model, "bench");
  double x[kOracleFeatures] = {600, 19000, 550, 18000};
  double sum = 0;
  for (auto _ : state) {
    sum += forest.score(x);
    x[0] = x[0] > 20000 ? 0 : x[0] + 37;  // walks change from call to call
    benchmark::DoNotOptimize(sum);
  }
  state.SetLabel("4 trees, depth 4");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ForestScore);

}  // namespace
}  // namespace sharebuf::policies

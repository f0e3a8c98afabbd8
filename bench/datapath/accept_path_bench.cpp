// The full accept path of one frame: decide (DT) + reserve + copy into cells + enqueue, then
// dequeue + gather + free + release, as an RX worker and an egress worker do it.
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include "buffer/shared_buffer.h"
#include "model/admission_step.h"
#include "policies/registry.h"

namespace sharebuf::datapath {
namespace {

void BM_AcceptPath(benchmark::State& state) {
  buffer::SharedBuffer buffer(
      {.capacity_cells = 21000, .ports = {buffer::PortSpec{.num_queues = 8}}});
  buffer::CellCache cache(buffer.pool());
  policies::PolicyEnv env{.layout = &buffer.layout()};
  auto policy = policies::make_policy("dt", policies::Params{}, env);
  const uint32_t bytes = static_cast<uint32_t>(state.range(0));
  std::vector<std::byte> frame(bytes, std::byte{0x5a});
  std::vector<std::byte> out(bytes);
  const policies::ArrivalContext ctx{
      .queue = 3, .cells = buffer.layout().cells_for(bytes), .bytes = bytes};
  for (auto _ : state) {
    const auto r = model::admit_frame(*policy, buffer, cache, buffer.exact_view(), ctx, frame, {});
    benchmark::DoNotOptimize(r);
    const size_t n = buffer.dequeue_copy(cache, 3, out);
    benchmark::DoNotOptimize(n);
  }
  if (buffer.state().total_cells() != 0) state.SkipWithError("frames left in the buffer");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_AcceptPath)->Arg(64)->Arg(1500);

}  // namespace
}  // namespace sharebuf::datapath

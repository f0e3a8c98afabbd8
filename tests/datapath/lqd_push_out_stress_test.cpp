// LQD's push-out under racing RX workers and an egress worker: a plan hands the victims' cells to
// the arrival, so an arrival that pushed frames out is never dropped because another worker took
// the freed cells first (the race a free-then-enqueue push-out had), and the books balance. The
// one refusal after a push-out the design allows: the cells of victims the egress worker took
// did not come back within SharedBuffer::kVictimWait (it was descheduled that long, which a
// loaded machine under a sanitizer can do); those are counted apart.
#include <atomic>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "model/admission_step.h"
#include "policies/lqd.h"
#include "tests/fixtures/buffer_fixture.h"

namespace sharebuf::datapath {
namespace {

class LqdPushOutStress : public testing::BufferFixture {};

TEST_F(LqdPushOutStress, AnArrivalThatPushedOutIsNeverDropped) {
  constexpr uint32_t kRxThreads = 2;
  constexpr uint32_t kFramesPerThread = 100'000;
  make_buffer({.capacity_cells = 300,
               .ports = std::vector<buffer::PortSpec>(2, buffer::PortSpec{.num_queues = 3}),
               .max_threads = kRxThreads + 2,
               .cache_cells = 32});
  policies::PolicyEnv env;
  env.layout = &buffer_->layout();
  policies::LqdPolicy lqd(policies::Params{}, env);
  const uint32_t queues = buffer_->layout().num_queues();

  std::atomic<uint64_t> pushed_cells{0};
  std::atomic<uint64_t> push_outs{0};
  std::atomic<uint64_t> dropped_after_push_out{0};
  std::atomic<uint64_t> waited_out{0};
  std::atomic<uint32_t> rx_done{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kRxThreads; ++t) {
    threads.emplace_back([&, t] {
      buffer::CellCache cache(buffer_->pool());
      std::mt19937 rng(t + 11);
      std::uniform_int_distribution<uint32_t> bytes(64, 1500);
      std::uniform_int_distribution<uint32_t> queue(0, queues - 1);
      std::vector<std::byte> frame(1500);
      for (uint32_t i = 0; i < kFramesPerThread; ++i) {
        const uint32_t b = bytes(rng);
        const uint32_t q = queue(rng);
        const policies::ArrivalContext ctx{.queue = q,
                                           .port = static_cast<uint16_t>(q / 3),
                                           .cells = buffer_->layout().cells_for(b),
                                           .bytes = b};
        const model::AdmissionOutcome out =
            model::admit_frame(lqd, *buffer_, cache, buffer_->exact_view(), ctx,
                               std::span<const std::byte>(frame.data(), b), {});
        if (out.pushed_out_cells != 0) {
          push_outs.fetch_add(1, std::memory_order_relaxed);
          pushed_cells.fetch_add(out.pushed_out_cells, std::memory_order_relaxed);
          if (!out.enqueued)
            (out.waited_out ? waited_out : dropped_after_push_out)
                .fetch_add(1, std::memory_order_relaxed);
        }
      }
      rx_done.fetch_add(1);
    });
  }
  // One egress worker drains slower than the arrivals come, so the buffer stays full.
  threads.emplace_back([&] {
    buffer::CellCache cache(buffer_->pool());
    for (uint32_t k = 0; rx_done.load() < kRxThreads; ++k) {
      const uint32_t q = k % queues;
      const uint32_t head = buffer_->dequeue(q);
      if (head != buffer::kNoCell) buffer_->release(cache, head);
      if (k % 4 != 0) std::this_thread::yield();
    }
  });
  for (auto& th : threads)
    th.join();

  EXPECT_GT(push_outs.load(), 1000u) << "the buffer was not full often enough to test anything";
  EXPECT_EQ(dropped_after_push_out.load(), 0u);
  if (waited_out.load() != 0)
    std::printf("%llu of %llu push-outs waited out the egress worker's cells\n",
                static_cast<unsigned long long>(waited_out.load()),
                static_cast<unsigned long long>(push_outs.load()));
  uint64_t counted = 0;
  for (uint32_t q = 0; q < queues; ++q)
    counted += buffer_->stats(q).dropped_cells[static_cast<size_t>(buffer::DropReason::kPushedOut)];
  EXPECT_EQ(counted, pushed_cells.load());
}

}  // namespace
}  // namespace sharebuf::datapath

// datapath/rx_frame.h's ring stamps: the time an RX batch's frames reached the ring, on the
// monotonic clock the meters and the admission step read.
#include "datapath/rx_frame.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace sharebuf::datapath {
namespace {

// The meters time each frame by its own ring stamp: three frames of one RX batch, stamped 8 us
// apart, keep that spacing on the monotonic clock (a batch read at one instant looked like one
// burst to a 12 KB meter).
TEST(RingArrival, FramesOfABatchKeepTheirSpacing) {
  const uint64_t now = 5'000'000, real_now = 1'700'000'000'000'000'000;
  RxFrame rx;
  std::vector<uint64_t> at;
  for (uint64_t ago : {16'000, 8'000, 0}) {
    rx.ring_realtime_ns = real_now - ago;
    at.push_back(ring_arrival_ns(rx, now, real_now));
  }
  EXPECT_EQ(at, (std::vector<uint64_t>{now - 16'000, now - 8'000, now}));
  rx.ring_realtime_ns = 0;  // no stamp (AF_XDP)
  EXPECT_EQ(ring_arrival_ns(rx, now, real_now), now);
  rx.ring_realtime_ns = real_now + 1;  // from the future: the clocks moved
  EXPECT_EQ(ring_arrival_ns(rx, now, real_now), now);
  rx.ring_realtime_ns = real_now - 2'000'000'000;  // implausibly old
  EXPECT_EQ(ring_arrival_ns(rx, now, real_now), now);
}

}  // namespace
}  // namespace sharebuf::datapath

// The egress side over in-memory ports: a wire that takes nothing (a full socket buffer) keeps the
// frames staged, in order, and they leave when it has room even if nothing else comes; partial
// sends keep the order; a hard send error drops the frame and is counted.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "tests/datapath/memory_switch.h"

namespace sharebuf::testing {
namespace {

const std::string kTwoPorts =
    "[switch]\nrx_park_after = 0\n[buffer]\nsize = \"4000 cells\"\n[[ports]]\ninterface = "
    "\"m0\"\n[[ports]]\ninterface = \"m1\"\n";

// The wire refuses the frames an RX worker sends inline (a full socket buffer): they stay
// staged, with nothing queued behind them and no frame coming to carry them. The egress worker is
// woken for them and tries again until the wire takes them.
TEST(EgressWorker, RetriesFramesTheWireRefusedWithNothingBehindThem) {
  MemorySwitch sw(kTwoPorts);
  sw.start();
  ASSERT_TRUE(eventually([&] { return sw.egress_asleep(1); }));
  sw.port(1).set_tx_room(0);
  ASSERT_EQ(sw.port(0).inject_burst(numbered(10)), 10u);
  ASSERT_TRUE(eventually([&] { return sw.worker_frames(0) == 10; }));
  ASSERT_TRUE(eventually([&] { return sw.port(1).refused() >= 10; })) << "the kick was refused";
  sw.port(1).set_tx_room(datapath::MemoryPort::kUnlimited);
  ASSERT_TRUE(sw.port(1).wait_sent(10, std::chrono::seconds(20)));
  ASSERT_TRUE(sent_in_order(sw.port(1), 10));
  ASSERT_TRUE(eventually([&] { return sw.egress_asleep(1); })) << "it sleeps again when done";
}

// The wire takes a few frames at a time: none is lost or reordered across the partial sends.
TEST(EgressWorker, KeepsOrderAcrossPartialSends) {
  MemorySwitch sw(kTwoPorts);
  sw.start();
  ASSERT_TRUE(eventually([&] { return sw.all_egress_asleep(); }));
  sw.port(1).set_tx_room(3);
  ASSERT_EQ(sw.port(0).inject_burst(numbered(100)), 100u);
  for (size_t got = 3; got < 100; got += 7) {
    ASSERT_TRUE(sw.port(1).wait_sent(got, std::chrono::seconds(20)));
    sw.port(1).set_tx_room(7);
  }
  sw.port(1).set_tx_room(datapath::MemoryPort::kUnlimited);
  ASSERT_TRUE(sw.port(1).wait_sent(100, std::chrono::seconds(20)));
  ASSERT_TRUE(sent_in_order(sw.port(1), 100));
  for (const auto& s : sw.port(1).sends())
    EXPECT_LE(s.frames, 7u);
}

TEST(EgressWorker, CountsHardSendErrors) {
  MemorySwitch sw(kTwoPorts);
  sw.start();
  ASSERT_TRUE(eventually([&] { return sw.all_egress_asleep(); }));
  sw.port(1).fail_sends(2);
  ASSERT_EQ(sw.port(0).inject_burst(numbered(5)), 5u);
  ASSERT_TRUE(sw.port(1).wait_sent(3, std::chrono::seconds(20)));
  sw.stop();
  EXPECT_EQ(sw.port(1).sent_count(), 3u);
  EXPECT_EQ(sw.port(1).tx_dropped(), 2u);
  EXPECT_EQ(sw.counters(1).tx_errors.load(), 2u) << "frames, not kicks that had an error";
  EXPECT_EQ(frame_number(sw.port(1).sent().front()), 2u) << "the first two were the failed ones";
}

}  // namespace
}  // namespace sharebuf::testing

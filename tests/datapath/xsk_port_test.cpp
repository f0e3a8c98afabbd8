// XskPort on a real veth pair, in a network namespace of the test's own (root; label netns).
#include "datapath/xsk_port.h"

#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "datapath/af_packet_port.h"
#include "datapath/xsk_umem.h"

namespace sharebuf::datapath {
namespace {

// A veth pair xa/xb, up, in a namespace that only this process sees (and goes with it).
class XskPortOnVeth : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (a network namespace and XDP)";
    ASSERT_EQ(unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET)";
    ASSERT_EQ(std::system("ip link add xa type veth peer name xb && ip link set xa up && "
                          "ip link set xb up"),
              0);
    ifindex_ = static_cast<int>(if_nametoindex("xa"));
    ASSERT_GT(ifindex_, 0);
  }

  // A port on xa, receive and transmit; skips where the kernel has no AF_XDP sockets.
  std::unique_ptr<XskPort> open() {
    try {
      return std::make_unique<XskPort>("xa", ifindex_, 1500, 64, false, 64);
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("socket(AF_XDP)") != std::string::npos) {
        skipped_ = e.what();
        return nullptr;
      }
      throw;
    }
  }

  int ifindex_ = 0;
  std::string skipped_;
};

// The kernel lets go of a closed AF_XDP socket's queue in deferred work (here, ~30 ms after the
// close), so a switch stopped and started again at once found its queues taken (EBUSY) and did
// not start. The port waits for the queue instead.
TEST_F(XskPortOnVeth, TakesItsQueuesAgainRightAfterTheyWereLetGo) {
  std::unique_ptr<XskPort> port = open();
  if (!port) GTEST_SKIP() << skipped_;
  for (int round = 0; round < 3; ++round) {
    port.reset();
    const auto start = std::chrono::steady_clock::now();
    ASSERT_NO_THROW(port = open()) << "round " << round;
    ASSERT_NE(port, nullptr);
    // Bounded: a queue held for good still fails, after the wait (seconds, not forever).
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  }
}

// With every transmit chunk taken and none sent, nothing can come back: tx_wait() waits out its
// timeout. It returned at once (poll() says POLLOUT while the TX ring has room, which it has), so
// the egress worker spun on a device that made no progress.
TEST_F(XskPortOnVeth, WaitsForATransmitChunkToComeBackInsteadOfSpinning) {
  std::unique_ptr<XskPort> port = open();
  if (!port) GTEST_SKIP() << skipped_;
  int taken = 0;
  while (port->tx_take() != nullptr)
    ++taken;
  EXPECT_EQ(taken, 64);
  const auto start = std::chrono::steady_clock::now();
  port->tx_wait(50);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(45));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(port->tx_take(), nullptr);
}

// A queue that another live socket holds is not waited for without end: the start fails and the
// error says the queue was held.
TEST_F(XskPortOnVeth, AQueueHeldByALiveSocketFailsTheStartWithAClearError) {
  std::unique_ptr<XskPort> port = open();
  if (!port) GTEST_SKIP() << skipped_;
  try {
    XskPort second("xa", ifindex_, 1500, 64, false, 64);
    FAIL() << "a second port bound the queue the first holds";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bind to queue 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("held it"), std::string::npos) << e.what();
  }
}

// Ports on both ends of the pair share one UMEM (XDP_SHARED_UMEM across devices): a frame xb sends
// arrives at xa in a chunk of the same area, and xb can send it on from that chunk, unchanged.
TEST_F(XskPortOnVeth, PortsOnOneUmemSendAReceivedFrameOnFromItsChunk) {
  if (!open()) GTEST_SKIP() << skipped_;  // AF_XDP present (the probe port is closed again)
  XskUmem umem(2048, XskUmem::chunks_for(2, 64, 64, 0));
  XskPort a("xa", ifindex_, 1500, 64, false, 64, &umem);
  XskPort b("xb", static_cast<int>(if_nametoindex("xb")), 1500, 64, false, 64, &umem);
  ASSERT_EQ(a.chunks(), &umem.store());
  uint8_t frame[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5};
  for (size_t i = 14; i < sizeof frame; ++i)
    frame[i] = static_cast<uint8_t>(i);
  // Sends `data` through b and returns what a receives (waiting up to 2 s), still held.
  RxFrame got;
  auto through = [&](uint8_t* data) {
    const uint32_t len = sizeof frame;
    uint64_t dropped = 0;
    uint32_t unsent = 0;
    EXPECT_EQ(b.tx_send(&data, &len, 1, &dropped, &unsent), 1u);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (a.peek_burst(&got, 1) == 0) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      b.tx_wait(1);  // has copy mode's kernel send what is on the ring
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  };
  uint8_t* chunk = b.tx_take();
  ASSERT_NE(chunk, nullptr);
  std::memcpy(chunk, frame, sizeof frame);
  ASSERT_TRUE(through(chunk)) << "nothing arrived at xa";
  ASSERT_EQ(got.len, sizeof frame);
  const auto* at = reinterpret_cast<const std::byte*>(got.data);
  EXPECT_TRUE(umem.store().holds(at, got.len)) << "received outside the shared area";
  EXPECT_EQ(std::memcmp(got.data, frame, sizeof frame), 0);
  // Kept, as the RX worker keeps a queued frame: a spare chunk goes to the fill ring instead.
  RxFrame& kept = got;
  ASSERT_TRUE(umem.store().take(&kept.refill));
  kept.kept = true;
  uint8_t* received = const_cast<uint8_t*>(got.data);
  a.release_burst();
  ASSERT_TRUE(through(received)) << "a frame sent from its receive chunk did not arrive";
  EXPECT_EQ(std::memcmp(got.data, frame, sizeof frame), 0);
  EXPECT_NE(got.data, received);  // a chunk of its own again
  a.release_burst();
}

// A kernel that refuses the shared UMEM leaves the port on UMEMs of its own, sending through
// AF_XDP all the same (here: an MTU the area's 2 KB chunks cannot hold).
TEST_F(XskPortOnVeth, APortTheSharedUmemCannotTakeGetsItsOwn) {
  if (!open()) GTEST_SKIP() << skipped_;
  ASSERT_EQ(std::system("ip link set xa mtu 3000"), 0);
  XskUmem umem(2048, XskUmem::chunks_for(1, 64, AfPacketPort::kXdpTxFrames, 0));
  AfPacketPort port("xa", ifindex_, 3000, 64, 16, 1, true, false, true, &umem);
  EXPECT_EQ(port.rx_chunks(), nullptr);
  EXPECT_STREQ(port.tx_io(), "af_xdp");
}

}  // namespace
}  // namespace sharebuf::datapath

// XskPort on a real veth pair, in a network namespace of the test's own (root; label netns).
#include "datapath/xsk_port.h"

#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sharebuf::datapath

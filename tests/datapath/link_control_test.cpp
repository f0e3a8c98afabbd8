#include "datapath/link_control.h"

#include <linux/if_link.h>
#include <net/if.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace sharebuf::datapath {
namespace {

namespace fs = std::filesystem;

// A stand-in for /sys/class/net: NAME/ifindex and NAME/queues/{rx,tx}-N/..., as the kernel lays
// them out.
class RpsSteeredTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/sharebuf-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    root_ = templ;
  }
  void TearDown() override { fs::remove_all(root_); }

  void add_device(const std::string& name, int ifindex) {
    fs::create_directories(root_ / name / "queues" / "tx-0");
    std::ofstream(root_ / name / "ifindex") << ifindex << "\n";
    std::ofstream(root_ / name / "queues" / "tx-0" / "xps_cpus") << "3\n";
  }
  void add_rx_queue(const std::string& name, int q, const std::string& mask) {
    const fs::path dir = root_ / name / "queues" / ("rx-" + std::to_string(q));
    fs::create_directories(dir);
    std::ofstream(dir / "rps_cpus") << mask << "\n";
  }

  fs::path root_;
};

TEST_F(RpsSteeredTest, AnEmptyMaskSteersNothing) {
  add_device("p1", 7);
  add_rx_queue("p1", 0, "0");
  EXPECT_EQ(rps_steered("p1", 7, root_), false);
  add_device("p2", 8);
  add_rx_queue("p2", 0, "00000000,00000000");
  EXPECT_EQ(rps_steered("p2", 8, root_), false);
}

TEST_F(RpsSteeredTest, AnyCpuInAnyQueueSteers) {
  add_device("p1", 7);
  add_rx_queue("p1", 0, "3");
  EXPECT_EQ(rps_steered("p1", 7, root_), true);
  add_device("p2", 8);
  add_rx_queue("p2", 0, "0");
  add_rx_queue("p2", 1, "00000001,00000000");
  EXPECT_EQ(rps_steered("p2", 8, root_), true);
}

TEST_F(RpsSteeredTest, AnotherNamespacesInterfaceOfTheSameNameIsNotRead) {
  add_device("p1", 7);
  add_rx_queue("p1", 0, "0");
  EXPECT_EQ(rps_steered("p1", 12, root_), std::nullopt);
}

TEST_F(RpsSteeredTest, UnreadableIsUnknown) {
  EXPECT_EQ(rps_steered("nosuch", 7, root_), std::nullopt);
  add_device("p1", 7);  // no receive queue: nothing to say
  EXPECT_EQ(rps_steered("p1", 7, root_), std::nullopt);
  fs::create_directories(root_ / "p1" / "queues" / "rx-0");  // rps_cpus missing: no CONFIG_RPS
  EXPECT_EQ(rps_steered("p1", 7, root_), std::nullopt);
}

TEST(ReadDriver, AnUnknownInterfaceHasNone) {
  EXPECT_EQ(read_driver("sharebuf-no-such-if"), "");
}

TEST(ReadXdp, LoopbackHasNoProgramAndAnUnknownInterfaceIsUnknown) {
  const int lo = static_cast<int>(if_nametoindex("lo"));
  ASSERT_GT(lo, 0);
  const std::optional<XdpState> state = read_xdp(lo);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->attached, XDP_ATTACHED_NONE);
  EXPECT_EQ(state->driver_prog_id, 0u);
  EXPECT_EQ(xdp_attached(lo), false);
  // No interface has the largest ifindex.
  EXPECT_EQ(read_xdp(0x7fffffff), std::nullopt);
  EXPECT_EQ(xdp_attached(0x7fffffff), std::nullopt);
}

TEST(SetXdpProgram, AFailureNamesTheInterface) {
  try {
    set_xdp_program("sharebuf-no-such-if", 0x7fffffff, -1);
    FAIL() << "detaching from an interface that does not exist succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("interface 'sharebuf-no-such-if'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sharebuf::datapath

#include "model/fabric_table.h"

#include <gtest/gtest.h>

#include <map>

#include "model/frame_parser.h"
#include "model/switch_config.h"
#include "model/switch_model.h"
#include "tests/model/frame_builder.h"

namespace sharebuf::model {
namespace {

using testing::build_frame;
using testing::FrameSpec;

constexpr MacAddress kHost(uint8_t last) {
  return 0x020000000000ull | last;
}

// A leaf: ports 0 and 1 face hosts, 2 and 3 are uplinks to two spines.
SwitchConfig leaf() {
  SwitchConfig c;
  for (int p = 0; p < 4; ++p) {
    PortConfig port;
    port.name = "p" + std::to_string(p);
    port.fabric = p >= 2;
    c.ports.push_back(port);
  }
  c.routes.push_back({kHost(9), {2, 3}});  // a host behind another leaf: either spine
  return c;
}

struct Fwd {
  SwitchConfig config = leaf();
  MacTable macs{64, 1'000'000'000'000ull};
  FabricTable fabric{config};
  Forward operator()(const std::vector<uint8_t>& frame, uint16_t in) {
    return forward_frame(macs, fabric, parse_frame(frame), in, 1, 4);
  }
};

std::vector<uint8_t> broadcast_from(uint8_t src) {
  std::vector<uint8_t> f = build_frame({.src_last = src});
  std::fill(f.begin(), f.begin() + 6, 0xff);
  return f;
}

TEST(FabricTable, AFloodNeverLeavesThroughAFabricPort) {
  Fwd fwd;
  const Forward b = fwd(broadcast_from(1), 0);
  ASSERT_EQ(b.kind, Forward::Kind::kFlood);
  EXPECT_EQ(b.flood, 0b0010u);  // the other host port only
  const Forward unknown = fwd(build_frame({.src_last = 1, .dst_last = 77}), 0);
  ASSERT_EQ(unknown.kind, Forward::Kind::kFlood);
  EXPECT_EQ(unknown.flood, 0b0010u);
  // From a spine: to both host ports, never back up.
  const Forward down = fwd(broadcast_from(9), 2);
  ASSERT_EQ(down.kind, Forward::Kind::kFlood);
  EXPECT_EQ(down.flood, 0b0011u);
}

TEST(FabricTable, AFabricPortTeachesNothing) {
  Fwd fwd;
  fwd(build_frame({.src_last = 5, .dst_last = 1}), 2);  // 02::05 arrives from a spine
  EXPECT_EQ(fwd.macs.lookup(kHost(5), 1), MacTable::kNoPort);
  fwd(build_frame({.src_last = 1, .dst_last = 5}), 0);  // 02::01 from a host port: learned
  EXPECT_EQ(fwd.macs.lookup(kHost(1), 1), 0);
}

TEST(FabricTable, ASwitchOfFabricPortsOnlyDropsWhatItHasNoRouteFor) {
  SwitchConfig spine;
  for (int p = 0; p < 3; ++p) {
    PortConfig port;
    port.name = "s" + std::to_string(p);
    port.fabric = true;
    spine.ports.push_back(port);
  }
  spine.routes.push_back({kHost(2), {1}});
  MacTable macs(64, 1'000'000'000'000ull);
  const FabricTable fabric(spine);
  const Forward routed = forward_frame(macs, fabric, parse_frame(build_frame({})), 0, 1, 3);
  EXPECT_EQ(routed.kind, Forward::Kind::kUnicast);
  EXPECT_EQ(routed.port, 1);
  EXPECT_EQ(forward_frame(macs, fabric, parse_frame(broadcast_from(1)), 0, 1, 3).kind,
            Forward::Kind::kFiltered);
  EXPECT_EQ(forward_frame(macs, fabric, parse_frame(build_frame({.dst_last = 50})), 0, 1, 3).kind,
            Forward::Kind::kFiltered);
}

TEST(FabricTable, AnEcmpGroupSpreadsFlowsAndKeepsEachOnOnePort) {
  Fwd fwd;
  std::map<uint16_t, int> per_port;
  for (uint16_t sport = 1000; sport < 1400; ++sport) {
    const std::vector<uint8_t> f = build_frame({.src_port = sport, .dst_last = 9});
    const Forward a = fwd(f, 0);
    ASSERT_EQ(a.kind, Forward::Kind::kUnicast);
    ASSERT_TRUE(a.port == 2 || a.port == 3) << a.port;
    for (int again = 0; again < 3; ++again)
      ASSERT_EQ(fwd(f, 1).port, a.port) << "a flow changed ports";
    ++per_port[a.port];
  }
  // 400 flows over two ports: each gets between 150 and 250 (a fair coin: p < 1e-6 outside).
  EXPECT_GE(per_port[2], 150);
  EXPECT_GE(per_port[3], 150);
}

TEST(FabricTable, ARouteWinsOverWhatWasLearned) {
  Fwd fwd;
  fwd(build_frame({.src_last = 9, .dst_last = 1}), 1);  // 02::09 seen on a host port
  const Forward f = fwd(build_frame({.src_last = 1, .dst_last = 9}), 0);
  ASSERT_EQ(f.kind, Forward::Kind::kUnicast);
  EXPECT_TRUE(f.port == 2 || f.port == 3);
}

TEST(FabricTable, WithoutRolesOrRoutesItIsTheLearningBridge) {
  SwitchConfig plain;
  for (int p = 0; p < 3; ++p)
    plain.ports.push_back({.name = "q" + std::to_string(p)});
  MacTable macs(64, 1'000'000'000'000ull);
  const FabricTable fabric(plain);
  EXPECT_TRUE(fabric.empty());
  const Forward b = forward_frame(macs, fabric, parse_frame(broadcast_from(1)), 1, 1, 3);
  EXPECT_EQ(b.flood, 0b101u);
}

}  // namespace
}  // namespace sharebuf::model

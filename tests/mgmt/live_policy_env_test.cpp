// The policy environment sharebufd builds: a TOML configuration, parsed as the daemon parses it,
// turned into the SwitchCore the daemon runs, gives FB (and ABM, FBA) each port's real
// scheduler, so gamma follows strict priority, round robin and DRR weights as configured.
#include <gtest/gtest.h>

#include "datapath/switch_core.h"
#include "mgmt/config_loader.h"
#include "policies/fb.h"
#include "tests/fixtures/occupancy.h"

namespace sharebuf::mgmt {
namespace {

constexpr const char* kConfig = R"(
[buffer]
size = "1000 cells"
[policy]
name = "fb"
[[classes]]
name = "q0"
queue = 0
[[classes]]
name = "q1"
queue = 1
[[classes]]
name = "q2"
queue = 2
[[ports]]
interface = "sp0"
queues = 3
scheduler = "sp"
[[ports]]
interface = "rr0"
queues = 3
scheduler = "rr"
[[ports]]
interface = "drr0"
queues = 3
scheduler = "drr"
weights = [1, 2, 5]
)";

TEST(LivePolicyEnv, FbGammaFollowsEachPortsConfiguredScheduler) {
  const DaemonConfig cfg = parse_config(kConfig, "live.toml");
  datapath::SwitchCore core(cfg.sw);
  auto& fb = dynamic_cast<policies::FbPolicy&>(core.policy());
  buffer::BufferState& state = core.buffer().state();
  const buffer::BufferView view = core.buffer().exact_view();
  // Every queue of every port holds a frame.
  for (uint32_t q = 0; q < 9; ++q)
    testing::set_queue_cells(state, q, 10);
  // Strict priority: the top queue gets the whole port; below a busy queue, 1/n_active.
  EXPECT_DOUBLE_EQ(fb.gamma(0, view), 1.0);
  EXPECT_DOUBLE_EQ(fb.gamma(2, view), 1.0 / 3);
  // Round robin: 1/3 each.
  EXPECT_DOUBLE_EQ(fb.gamma(3, view), 1.0 / 3);
  EXPECT_DOUBLE_EQ(fb.gamma(5, view), 1.0 / 3);
  // DRR 1:2:5.
  EXPECT_DOUBLE_EQ(fb.gamma(6, view), 1.0 / 8);
  EXPECT_DOUBLE_EQ(fb.gamma(8, view), 5.0 / 8);
  // With DRR's queue 0 empty the others share by 2:5 (an arrival counts its own queue).
  testing::set_queue_cells(state, 6, 0);
  EXPECT_DOUBLE_EQ(fb.gamma(7, view), 2.0 / 7);
  EXPECT_DOUBLE_EQ(fb.gamma(6, view), 1.0 / 8);
  for (uint32_t q = 0; q < 9; ++q)
    testing::set_queue_cells(state, q, 0);
}

}  // namespace
}  // namespace sharebuf::mgmt

// trim.set's update (datapath/switch_control.h's trim_update): every live [trimming] key of
// model/trim_params.h reaches the running switch, and only it.
#include <string>

#include <gtest/gtest.h>

#include "datapath/switch_control.h"
#include "model/trim_params.h"

namespace sharebuf::datapath {
namespace {

// Every live key sets its own field of the update, and only it; start-only keys set none.
TEST(TrimUpdate, EveryLiveKeyReachesTheUpdate) {
  auto fields = [](const TrimUpdate& u) {
    return int{u.trim_size.has_value()} + u.trim_fix_lengths.has_value() + u.trim_dscp.has_value() +
           u.return_dscp.has_value() + u.tofino_approx.has_value() + u.meters.has_value() +
           u.meter_burst.has_value() + u.pessimistic_share.has_value() + u.t0_ns.has_value() +
           u.t1_ns.has_value() + u.recirc_rate_bps.has_value() + u.recirc_queue.has_value() +
           u.recirc_latency_ns.has_value() + u.trim_newest.has_value();
  };
  int live = 0;
  for (const policies::ParamSpec& s : model::kTrimParams) {
    const TrimUpdate u = trim_update(model::TrimConfig{}, {std::string(s.name)});
    EXPECT_EQ(fields(u), model::trim_key_live(s.name) ? 1 : 0) << s.name;
    live += model::trim_key_live(s.name) ? 1 : 0;
  }
  EXPECT_EQ(live, 14);
}

}  // namespace
}  // namespace sharebuf::datapath

// A human-readable table of a switch's ports and queues, from the stats JSON
// (datapath::SwitchControl::stats(), the stats file).
//
// Per queue: received = admitted + dropped before admission (by reason); admitted = transmitted +
// pushed out + queued. Per port: RX frames and the reasons frames went nowhere.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sharebuf::mgmt {

std::string switch_stats_table(const nlohmann::json& stats);

}  // namespace sharebuf::mgmt

// Reports of a switch's counters: a JSON document (written to the stats file, later served by the
// control socket) and a human-readable table of ports and queues.
//
// Per queue: received = admitted + dropped before admission (by reason); admitted = transmitted +
// pushed out + queued. Per port: RX frames and the reasons frames went nowhere.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "datapath/switch_core.h"

namespace sharebuf::mgmt {

nlohmann::json switch_stats_json(const datapath::SwitchCore& core);
std::string switch_stats_table(const datapath::SwitchCore& core);

}  // namespace sharebuf::mgmt

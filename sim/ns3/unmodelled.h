// What the switch inside ns-3 does not model, refused rather than answered differently from the
// live switch and the replay: [buffer] probe_bytes (the ns-3 links do not carry the probes).
// ns-3's own (the facade and sharebuf-sim's scenarios); C++20.
#pragma once

#include <string>

#include "model/switch_config.h"

namespace sharebuf::sim {

// Throws common::ConfigError naming `source` and what it refuses.
void refuse_unmodelled(const model::SwitchConfig& config, const std::string& source);

}  // namespace sharebuf::sim

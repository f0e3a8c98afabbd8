// parse_config_table: sharebufd's configuration from a TOML table already parsed. sharebuf-sim
// builds one such table per switch from its scenario file (sim/ns3/scenario.cpp), so an error
// still names that file's line and key. Separate from config_loader.h to keep toml++ out of its
// includers.
#pragma once

#include <string>

#include <toml++/toml.h>

#include "mgmt/config_loader.h"

namespace sharebuf::mgmt {

// Throws ConfigError.
DaemonConfig parse_config_table(const toml::table& root, const std::string& file);

}  // namespace sharebuf::mgmt

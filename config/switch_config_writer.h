// The switch's configuration written back as TOML: every key read_switch_config reads, with the
// value it has (defaults written out too), so that a run's effective configuration can be kept
// beside its results and loaded again as it is: read_switch_config(write_switch_config(c)) gives
// c back (tests/config/switch_config_writer_test.cpp). sharebuf-replay writes it for every run
// (--effective-config, and in --json), whatever built the switch: a file, a built-in scenario,
// and the --set overrides over either.
#pragma once

#include <string>

#include "model/switch_config.h"

namespace sharebuf::config {

std::string write_switch_config(const model::SwitchConfig& config);

}  // namespace sharebuf::config

// The control-plane entries of sharebuf's P4 twins (p4/*.p4), generated from a sharebufd
// configuration by the same code the software runs: the arithmetic tables are
// policies::TofinoArithmetic's (what ProteanPolicy's `arithmetic = "tofino"` looks up), the
// policy parameters are those the policy object itself reads (defaults included), and the
// queues, classes and rates come from the same SwitchConfig sharebufd builds its switch from.
//
// The result is JSON (p4/README.md, "The entries"): tables with their entries and default
// actions by their bfrt names, registers to initialise, meters, mirror sessions, multicast
// groups, the packet generator's application, the traffic manager's settings and the compile
// definitions the program needs. A configuration the program or the hardware cannot represent
// is a P4TablesError naming the key.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/switch_config.h"

namespace sharebuf::p4 {

class P4TablesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct P4TablesOptions {
  std::string program;  // dt, protean, fb, trim
  std::vector<uint16_t>
      dev_ports;       // the Tofino device port of each configured port; empty: 0, 1, ...
  uint32_t pipes = 0;  // pipes with a recirculation port; 0: [trimming] pipelines, else 1
};

inline constexpr const char* kPrograms[] = {"dt", "protean", "fb", "trim"};

// Throws P4TablesError.
nlohmann::json generate_p4_tables(const model::SwitchConfig& config,
                                  const P4TablesOptions& options);

}  // namespace sharebuf::p4

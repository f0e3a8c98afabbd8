// ConfigError: a configuration that cannot be used — a TOML file, an override, a policy's or a
// model's parameters, a scenario. Thrown at every layer that reads configuration (a policy checks
// its parameters, the model its trimming and view keys, config/ the file), so it lives at the
// bottom; its message names where the value came from (file, line, column and key, or the
// override or request that set it) and what is wrong.
#pragma once

#include <stdexcept>

namespace sharebuf::common {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sharebuf::common

// libFuzzer target for the TOML configuration loader: any text as a configuration file is either
// accepted (and then a SwitchConfig that validates its policy) or refused with a ConfigError that
// names the file; it never crashes, hangs or throws anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mgmt/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const sharebuf::mgmt::DaemonConfig cfg = sharebuf::mgmt::parse_config(text, "fuzz.toml");
    sharebuf::mgmt::validate_config(cfg.sw);
  } catch (const sharebuf::mgmt::ConfigError& e) {
    if (std::string_view(e.what()).find("fuzz.toml") == std::string_view::npos &&
        std::string_view(e.what()).find("policy") == std::string_view::npos)
      __builtin_trap();  // an error must say where it comes from
  }
  return 0;
}

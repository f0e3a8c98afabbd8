// A switch core with two ports that opens nothing (no AF_PACKET, no netns), wrapped in a control
// context, for protocol tests.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "datapath/switch_control.h"
#include "datapath/switch_core.h"
#include "mgmt/config_loader.h"
#include "mgmt/control_commands.h"

namespace sharebuf::testing {

inline constexpr const char* kControlConfig = R"([switch]
name = "ctl-test"
[buffer]
size = "4000 cells"
cell_bytes = 80
[policy]
name = "dt"
alpha = 1.0
[[classes]]
name = "low"
[[ports]]
interface = "pa"
rate = "1Gbit"
[[ports]]
interface = "pb"
)";

// Captures go to a folder of this test process's own.
inline std::string capture_dir() {
  return (std::filesystem::temp_directory_path() /
          ("sharebuf-ctl-captures-" + std::to_string(getpid())))
      .string();
}

// Models named in requests come from a folder of this test process's own.
inline std::string model_dir() {
  return (std::filesystem::temp_directory_path() /
          ("sharebuf-ctl-models-" + std::to_string(getpid())))
      .string();
}

// Both folders go when the test process exits, so test runs leave nothing in the temp folder.
struct TempDirsRemover {
  TempDirsRemover() = default;
  TempDirsRemover(const TempDirsRemover&) = delete;
  TempDirsRemover& operator=(const TempDirsRemover&) = delete;
  ~TempDirsRemover() {
    std::error_code ec;
    std::filesystem::remove_all(capture_dir(), ec);
    std::filesystem::remove_all(model_dir(), ec);
  }
};
inline TempDirsRemover temp_dirs_remover;

struct ControlFixture {
  explicit ControlFixture(const char* toml = kControlConfig)
      : config(with_capture_dir(mgmt::parse_config(toml, "ctl.toml"))),
        core(std::make_unique<datapath::SwitchCore>(config.sw)),
        control(std::make_unique<datapath::SwitchControl>(*core)),
        ctx(*control, config, config.source_text) {}
  static mgmt::DaemonConfig with_capture_dir(mgmt::DaemonConfig c) {
    c.control.capture_dir = capture_dir();
    c.control.model_dir = model_dir();
    return c;
  }
  mgmt::DaemonConfig config;
  std::unique_ptr<datapath::SwitchCore> core;
  std::unique_ptr<datapath::SwitchControl> control;  // what mgmt sees of the core
  mgmt::ControlContext ctx;
};

}  // namespace sharebuf::testing

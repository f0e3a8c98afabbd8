// libFuzzer target for the control protocol: any byte string as a request line must get a JSON
// reply with "ok" and never crash, hang or leak. Commands that touch the filesystem or the
// process (capture.start, shutdown) are parsed but not executed.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "datapath/switch_control.h"
#include "datapath/switch_core.h"
#include "mgmt/config_loader.h"
#include "mgmt/control_commands.h"

namespace {

constexpr const char* kConfig = R"([switch]
name = "fuzz"
[buffer]
size = "2000 cells"
[[ports]]
interface = "fa"
[[ports]]
interface = "fb"
)";

struct World {
  sharebuf::mgmt::DaemonConfig config = sharebuf::mgmt::parse_config(kConfig, "fuzz.toml");
  std::unique_ptr<sharebuf::datapath::SwitchCore> core =
      std::make_unique<sharebuf::datapath::SwitchCore>(config.sw);
  sharebuf::datapath::SwitchControl control{*core};
  sharebuf::mgmt::ControlContext ctx{control, config, config.source_text};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  try {
    const auto req = sharebuf::mgmt::parse_request(line);
    if (req.cmd == "capture.start" || req.cmd == "shutdown") return 0;
  } catch (const sharebuf::mgmt::RequestError&) {
  }
  const nlohmann::json reply = sharebuf::mgmt::handle_request(world->ctx, line);
  if (!reply.contains("ok") || !reply["ok"].is_boolean()) __builtin_trap();
  // No worker runs: every retired policy is freed at once, so memory stays bounded.
  if (world->core->retired_pending() != 0) __builtin_trap();
  return 0;
}

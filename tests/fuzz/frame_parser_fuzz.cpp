// libFuzzer target for the RX path's frame handling: any byte string as a received frame goes
// through what an RX worker does with it — parse, classify (every mode), hash, complete a partial
// checksum, mark CE — and must never read or write outside the frame (ASan) or crash.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "config/switch_config_reader.h"
#include "model/checksum.h"
#include "model/classifier.h"
#include "model/ecn.h"
#include "model/frame_parser.h"

namespace {

// Classification by rules (5-tuple), DSCP and PCP, as three switches would configure it.
sharebuf::model::SwitchConfig config(const char* mode) {
  const std::string text = std::string(R"([buffer]
size = "1000 cells"
[classify]
mode = ")") + mode + R"("
[[classify.rules]]
proto = "udp"
dst_port = 5001
class = "b"
[[classify.rules]]
src = "198.18.0.0/24"
class = "a"
[[classes]]
name = "a"
dscp = [46]
pcp = [5]
[[classes]]
name = "b"
queue = 1
dscp = [8]
[[ports]]
interface = "fa"
queues = 2
)";
  return sharebuf::config::parse_switch_config(text, "fuzz.toml");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const sharebuf::model::Classifier* classifiers[] = {
      new sharebuf::model::Classifier(config("rules")),
      new sharebuf::model::Classifier(config("dscp")),
      new sharebuf::model::Classifier(config("pcp"))};
  // A copy the size of the input exactly, so ASan sees any read or write past its end.
  std::vector<uint8_t> frame(data, data + size);
  const sharebuf::model::ParsedFrame parsed = sharebuf::model::parse_frame(frame);
  if (!parsed.ok()) return 0;
  for (const auto* c : classifiers) {
    const uint8_t cls = c->classify(parsed, 0);
    if (c->queue_of(cls) > 1) __builtin_trap();
  }
  (void)sharebuf::model::flow_hash(parsed);
  (void)sharebuf::model::complete_l4_checksum(std::span<uint8_t>(frame), parsed);
  (void)sharebuf::model::mark_ce(std::span<uint8_t>(frame), parsed);
  return 0;
}

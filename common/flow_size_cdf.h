// FlowSizeCdf: a flow-size distribution as a CDF file (one "bytes probability" row per point,
// both non-decreasing, ending at 1; '#' comments; linear between points), e.g.
// data/websearch-flow-size-cdf.txt. Read by the replay's websearch generator (sim/) and by
// sharebuf-tg (tools/), which draw flow sizes from the same file the same way.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sharebuf::common {

class FlowSizeCdf {
 public:
  // Throws std::runtime_error naming the file and line of a bad row.
  static FlowSizeCdf load(const std::string& path);
  // The size at cumulative probability u in [0, 1).
  uint64_t quantile(double u) const;

 private:
  std::vector<std::pair<double, double>> points_;  // (bytes, probability), increasing
};

}  // namespace sharebuf::common

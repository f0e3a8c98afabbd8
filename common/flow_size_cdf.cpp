#include "common/flow_size_cdf.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sharebuf::common {

FlowSizeCdf FlowSizeCdf::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the flow-size CDF");
  FlowSizeCdf cdf;
  std::string line;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    double bytes = 0;
    double p = 0;
    if (!(row >> bytes >> p) || bytes < 0 || p < 0 || p > 1 ||
        (!cdf.points_.empty() &&
         (bytes < cdf.points_.back().first || p < cdf.points_.back().second)))
      throw std::runtime_error(path + ":" + std::to_string(lineno) +
                               ": expected 'bytes probability', both non-decreasing, p in 0..1");
    cdf.points_.emplace_back(bytes, p);
  }
  if (cdf.points_.size() < 2 || cdf.points_.back().second != 1.0)
    throw std::runtime_error(path + ": a CDF needs at least two points and must end at 1");
  return cdf;
}

uint64_t FlowSizeCdf::quantile(double u) const {
  for (size_t i = 1; i < points_.size(); ++i) {
    const auto [x0, p0] = points_[i - 1];
    const auto [x1, p1] = points_[i];
    if (u < p1 || i + 1 == points_.size()) {
      const double f = p1 > p0 ? std::clamp((u - p0) / (p1 - p0), 0.0, 1.0) : 1.0;
      return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(x0 + f * (x1 - x0))));
    }
  }
  return static_cast<uint64_t>(points_.back().first);
}

}  // namespace sharebuf::common

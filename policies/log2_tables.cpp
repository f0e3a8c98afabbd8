#include "policies/log2_tables.h"

#include <cmath>

namespace sharebuf::policies {

Log2Tables::Log2Tables() : log_(1u << kMantissaBits), exp_(1u << kFracBits) {
  for (uint32_t i = 0; i < log_.size(); ++i) {
    log_[i] = static_cast<uint32_t>(std::lround(std::log2(1.0 + i / 256.0) * 65536.0));
  }
  for (uint32_t i = 0; i < exp_.size(); ++i) {
    exp_[i] = static_cast<uint32_t>(std::lround(std::exp2(i / 256.0) * 65536.0));
  }
}

int32_t Log2Tables::log2_fixed(uint64_t x) const noexcept {
  if (x == 0) return INT32_MIN / 2;
  const int msb = 63 - __builtin_clzll(x);
  // The mantissa bits right below the leading one, as the ternary match sees them. Rounding to
  // the nearest table entry (instead of truncating) halves the error.
  uint64_t mantissa;
  if (msb > kMantissaBits) {
    const uint64_t wide = x >> (msb - kMantissaBits - 1);  // one extra bit for rounding
    mantissa = ((wide & ((1u << (kMantissaBits + 1)) - 1)) + 1) >> 1;
  } else {
    mantissa = (x << (kMantissaBits - msb)) & ((1u << kMantissaBits) - 1);
  }
  int32_t result = msb << kFracBits;
  if (mantissa >= (1u << kMantissaBits)) {
    result += 1 << kFracBits;  // rounded up to the next power of two
  } else {
    result += static_cast<int32_t>((log_[mantissa] + 128) >> 8);
  }
  return result;
}

int32_t Log2Tables::log2_fixed_real(double x) const noexcept {
  const double scaled = x * 65536.0;
  if (scaled < 1) return INT32_MIN / 2;
  return log2_fixed(static_cast<uint64_t>(scaled)) - (16 << kFracBits);
}

double Log2Tables::exp2_fixed(int32_t y) const noexcept {
  const int32_t whole = y >> kFracBits;  // floor, also for negative y
  const uint32_t frac = static_cast<uint32_t>(y) & ((1u << kFracBits) - 1);
  if (whole < -60) return 0;
  return std::ldexp(exp_[frac] / 65536.0, whole);
}

const Log2Tables& log2_tables() {
  static const Log2Tables tables;
  return tables;
}

}  // namespace sharebuf::policies

// Log2Tables: multiplication and division the way a Tofino does them (Protean paper, section
// III-C, Eqs. 4-5): a ternary-match table turns an integer into log2 in fixed point (position of
// the leading one plus a lookup on the next mantissa bits), sums and differences replace
// products and quotients, and an exact-match table turns the result back (exp2). The same
// generator produces the tables the P4 program's control plane installs (p4/), so software and
// hardware approximate identically. Mean error over wide sweeps is well under 1 %
// (tests/policies/log2_tables_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace sharebuf::policies {

class Log2Tables {
 public:
  static constexpr int kFracBits = 8;  // log2 values are fixed point with 8 fractional bits
  static constexpr int kMantissaBits = 8;

  Log2Tables();

  // log2(x) * 256, rounded through the table; x must be > 0.
  int32_t log2_fixed(uint64_t x) const noexcept;
  // log2 of a positive real, through the table on its fixed-point value with 16 fractional bits
  // (how a gradient held in a Tofino register would be scaled).
  int32_t log2_fixed_real(double x) const noexcept;
  // 2^(y / 256) as a real number.
  double exp2_fixed(int32_t y) const noexcept;

  // a / b and a * b through the tables.
  double divide(uint64_t a, uint64_t b) const noexcept {
    return exp2_fixed(log2_fixed(a) - log2_fixed(b));
  }
  double multiply(double a, uint64_t b) const noexcept {
    return exp2_fixed(log2_fixed_real(a) + log2_fixed(b));
  }

  // The tables as installed on the switch: log2(1 + i/2^kMantissaBits) and 2^(i/256), both
  // scaled by 2^16.
  const std::vector<uint32_t>& log_table() const noexcept { return log_; }
  const std::vector<uint32_t>& exp_table() const noexcept { return exp_; }

 private:
  std::vector<uint32_t> log_;  // Q.16 of log2(1 + i / 256), i < 256
  std::vector<uint32_t> exp_;  // Q.16 of 2^(i / 256), i < 256
};

// One process-wide instance (the tables are constant).
const Log2Tables& log2_tables();

}  // namespace sharebuf::policies

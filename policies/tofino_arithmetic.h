// TofinoArithmetic: multiplication and division the way a Tofino program does them (Protean paper
// III-C, Eqs. 4-5; IV-C.2: per operation two ternary log2 tables and one exact exp2 table),
// as control-plane entries and as the software that evaluates them.
//
// The entries are what p4/ installs (sharebuf-p4tables, p4/include/log_arith.p4), and the
// software's `arithmetic = "tofino"` (ProteanPolicy, and the P4 twins' tests) looks numbers up
// in lookup arrays filled from those same entries, not from a formula of its own:
//
//   log2:   a ternary table over a 32-bit x. Below 2^9 one entry per value; above, one entry per
//           (position of the leading one, the 8 bits below it), matching those 9 bits and
//           requiring zeros above them; its value is log2 of the middle of the range it matches.
//           Result: log2(x) x 256 (Q.8), within 0.0028 of the truth (0.2 % after exp2).
//   exp2:   exact tables over a Q.8 logarithm: gradient (key s + 2048, s in [-2048, 5888):
//           2^(s/256) x 256, a Q.8 gradient; below the range 0, above it the largest entry) and
//           cells (key t in [0, 8192): 2^(t/256) rounded; t < 0 is 0 cells).
//
// Gradients are Q.8 signed integers (x 256), as a Tofino register would hold them; beta must be
// 2^-k so the EWMA is shifts and adds; alphas and port rates enter as Q.8 logarithms.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sharebuf::policies {

struct TernaryEntry {
  uint32_t value = 0;
  uint32_t mask = 0;
  int32_t result = 0;
};
struct ExactEntry {
  uint32_t key = 0;
  int64_t result = 0;
};

class TofinoArithmetic {
 public:
  static constexpr int kFracBits = 8;      // logarithms are Q.8
  static constexpr int kMantissaBits = 8;  // bits below the leading one a log2 entry matches
  static constexpr int32_t kOne = 1 << kFracBits;          // log2 scale: 1.0 = 256
  static constexpr int32_t kLogOfZero = -1073741824;       // what the log2 table's miss returns
  static constexpr int32_t kGradientExpOffset = 8 * kOne;  // key = s + 2048
  // s in [-2048, 5888): gradients below 2^23 (x 256 fits an int<32> register).
  static constexpr uint32_t kGradientExpKeys = 31 * kOne;
  static constexpr uint32_t kCellsExpKeys = 32 * kOne;  // t in [0, 8192)
  static constexpr int32_t kQ8Log = kFracBits * kOne;   // log2(256) x 256: a Q.8 value's scale
  // The largest cells value: protean.p4 and dt.p4 test Q < T by the sign bit of the 32-bit Q - T,
  // which holds only while T < 2^31; no queue holds 2^31 cells, so the cap changes no decision.
  static constexpr uint32_t kMaxCells = 0x7fffffffu;

  // The control-plane entries (p4/include/log_arith.p4's tables).
  static std::vector<TernaryEntry> log2_entries();
  static std::vector<ExactEntry> gradient_exp_entries();
  static std::vector<ExactEntry> cells_exp_entries();
  // round(log2(x) x 256) of a real constant (an alpha, a port's rate in cells per ns).
  static int32_t log_constant(double x);
  // beta = 2^-k: k, or -1 if beta is not such a power (0 < beta <= 1).
  static int beta_shift(double beta);

  // Builds the lookup arrays from the entries above; throws std::logic_error if an entry does
  // not have the shape the lookup assumes.
  TofinoArithmetic();

  // The tables as the software holds them: each entry's result, found by evaluating the entries
  // (tests compare them with the entries and with a ternary match of every kind of key).
  int32_t log2(uint32_t x) const noexcept;         // Q.8; kLogOfZero for 0
  int32_t exp_gradient(int32_t s) const noexcept;  // Q.8 gradient
  uint32_t exp_cells(int32_t t) const noexcept;    // cells

  // Protean's two operations (Eqs. 4 and 5), as protean.p4 chains the tables.
  // |dq| / dt / rate as a Q.8 gradient; dq in cells, dt in ns, log_rate = log2(cells per ns).
  int32_t gradient_q8(uint32_t dq, uint32_t dt_ns, int32_t log_rate) const noexcept;
  // g x alpha x b in cells (g a Q.8 gradient, log_alpha = log2(alpha) x 256).
  uint32_t scale(int32_t g_q8, int32_t log_alpha, uint32_t b) const noexcept;
  // alpha x b in cells.
  uint32_t scale(int32_t log_alpha, uint32_t b) const noexcept;
  // a / b and a x b for reals, through the tables (the accuracy tests): a, b >= 1.
  double divide(uint32_t a, uint32_t b) const noexcept;
  double multiply(double g, uint32_t b) const noexcept;

 private:
  std::array<int32_t, 1u << (kMantissaBits + 1)> small_{};             // x < 2^9
  std::array<std::array<int32_t, 1u << kMantissaBits>, 32> by_msb_{};  // x >= 2^9
  std::vector<int32_t> gradient_exp_;
  std::vector<uint32_t> cells_exp_;
};

// One process-wide instance (the tables are constant).
const TofinoArithmetic& tofino_arithmetic();

// log2 of a port's rate in cells per ns, Q.8: the constant Eq. 4 subtracts (protean.p4's
// queue_rate table and ProteanPolicy's tofino arithmetic take it from here).
inline int32_t log_rate_cells_per_ns(double rate_cells_per_s) {
  return TofinoArithmetic::log_constant(rate_cells_per_s * 1e-9);
}

}  // namespace sharebuf::policies

// The Tofino arithmetic (policies/tofino_arithmetic.h): the software's lookups are the control
// plane's entries (a ternary match over the log2 entries, an exact match over the exp2 entries,
// key by key), and products and quotients through them are within 1 % on average over the
// paper's ranges (32-bit operands; the Protean paper IV-C.2), the maximum reported.
#include "policies/tofino_arithmetic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <random>

namespace sharebuf::policies {
namespace {

// A ternary match as a TCAM resolves it: the entries whose masked value equals the masked key;
// more than one match would need a priority, and the tables are built so that never happens.
class Tcam {
 public:
  explicit Tcam(const std::vector<TernaryEntry>& entries) {
    for (const TernaryEntry& e : entries)
      by_mask_[e.mask][e.value] = e.result;
  }
  // The result, or nothing when no entry matches; fails the test on two matches.
  std::optional<int32_t> match(uint32_t key) const {
    std::optional<int32_t> out;
    for (const auto& [mask, entries] : by_mask_) {
      const auto it = entries.find(key & mask);
      if (it == entries.end()) continue;
      EXPECT_FALSE(out.has_value()) << "two entries match " << key;
      out = it->second;
    }
    return out;
  }

 private:
  std::map<uint32_t, std::map<uint32_t, int32_t>> by_mask_;
};

TEST(TofinoArithmetic, TheSoftwareLooksUpWhatTheTernaryEntriesSay) {
  const TofinoArithmetic& a = tofino_arithmetic();
  const Tcam tcam(TofinoArithmetic::log2_entries());
  EXPECT_FALSE(tcam.match(0).has_value());
  EXPECT_EQ(a.log2(0), TofinoArithmetic::kLogOfZero);
  // Every small value, both ends of every range above, and random keys.
  std::vector<uint32_t> keys;
  for (uint32_t x = 1; x < 4096; ++x)
    keys.push_back(x);
  for (int msb = 9; msb < 32; ++msb) {
    for (uint32_t m = 0; m < 256; ++m) {
      const uint32_t low = (1u << msb) | (m << (msb - 8));
      keys.push_back(low);
      keys.push_back(low + (1u << (msb - 8)) - 1);
    }
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 100000; ++i)
    keys.push_back(static_cast<uint32_t>(rng()) >> (rng() % 32));
  for (uint32_t x : keys) {
    if (x == 0) continue;
    const std::optional<int32_t> hw = tcam.match(x);
    ASSERT_TRUE(hw.has_value()) << x;
    ASSERT_EQ(a.log2(x), *hw) << x;
  }
}

TEST(TofinoArithmetic, TheSoftwareLooksUpWhatTheExactEntriesSay) {
  const TofinoArithmetic& a = tofino_arithmetic();
  for (const ExactEntry& e : TofinoArithmetic::gradient_exp_entries()) {
    ASSERT_EQ(a.exp_gradient(static_cast<int32_t>(e.key) - TofinoArithmetic::kGradientExpOffset),
              e.result);
  }
  for (const ExactEntry& e : TofinoArithmetic::cells_exp_entries())
    ASSERT_EQ(a.exp_cells(static_cast<int32_t>(e.key)), static_cast<uint32_t>(e.result));
  // Beyond the tables: below is 0, above the largest entry.
  EXPECT_EQ(a.exp_gradient(-100000), 0);
  EXPECT_EQ(a.exp_cells(-1), 0u);
  EXPECT_EQ(a.exp_cells(1 << 20), a.exp_cells(TofinoArithmetic::kCellsExpKeys - 1));
}

// Division (Eq. 4) over 32-bit operands whose quotient the gradient table holds with 8 bits or
// more (1 to 2^23); products (Eq. 5) of gradients from the buildup threshold to 1024 with a
// remaining buffer of 64 to 2^20 cells (below, rounding to whole cells dominates).
TEST(TofinoArithmetic, QuotientsAndProductsWithinOnePercentOnAverage) {
  const TofinoArithmetic& a = tofino_arithmetic();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> bits(0, 32);
  double div_sum = 0, div_max = 0, mul_sum = 0, mul_max = 0;
  int n_div = 0, n_mul = 0;
  while (n_div < 200000) {
    const auto x = static_cast<uint32_t>(std::min(std::exp2(bits(rng)), 4294967295.0));
    const auto y = static_cast<uint32_t>(std::min(std::exp2(bits(rng)), 4294967295.0));
    if (x == 0 || y == 0) continue;
    const double exact = static_cast<double>(x) / y;
    if (exact < 1 || exact >= std::exp2(23)) continue;
    const double e = std::abs(a.divide(x, y) - exact) / exact;
    div_sum += e;
    div_max = std::max(div_max, e);
    ++n_div;
  }
  std::uniform_real_distribution<double> g_bits(1, 10), b_bits(6, 20);
  for (; n_mul < 200000; ++n_mul) {
    const double g = std::round(std::exp2(g_bits(rng)) * 256) / 256;  // a Q.8 gradient
    const auto b = static_cast<uint32_t>(std::exp2(b_bits(rng)));
    const double exact = g * b;
    const double e = std::abs(a.multiply(g, b) - exact) / exact;
    mul_sum += e;
    mul_max = std::max(mul_max, e);
  }
  std::printf(
      "quotients: mean relative error %.3f %%, max %.3f %%; products: mean %.3f %%, "
      "max %.3f %%\n",
      100 * div_sum / n_div, 100 * div_max, 100 * mul_sum / n_mul, 100 * mul_max);
  EXPECT_LT(div_sum / n_div, 0.01);
  EXPECT_LT(mul_sum / n_mul, 0.01);
  // The worst case is bounded too: half a table step per logarithm, plus rounding.
  EXPECT_LT(div_max, 0.02);
  EXPECT_LT(mul_max, 0.02);
}

TEST(TofinoArithmetic, BetaMustBeAPowerOfTwo) {
  EXPECT_EQ(TofinoArithmetic::beta_shift(1), 0);
  EXPECT_EQ(TofinoArithmetic::beta_shift(0.25), 2);
  EXPECT_EQ(TofinoArithmetic::beta_shift(1.0 / 1024), 10);
  EXPECT_EQ(TofinoArithmetic::beta_shift(0.3), -1);
  EXPECT_EQ(TofinoArithmetic::log_constant(0.5), -256);
  EXPECT_EQ(TofinoArithmetic::log_constant(1), 0);
}

}  // namespace
}  // namespace sharebuf::policies

#include "policies/tofino_arithmetic.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sharebuf::policies {
namespace {

int msb_of(uint32_t x) {
  return 31 - __builtin_clz(x);
}

}  // namespace

std::vector<TernaryEntry> TofinoArithmetic::log2_entries() {
  std::vector<TernaryEntry> out;
  // Exact below 2^(M+1): the leading one and every bit under it are known.
  for (uint32_t x = 1; x < (1u << (kMantissaBits + 1)); ++x) {
    out.push_back({x, 0xffffffffu,
                   static_cast<int32_t>(std::lround(std::log2(static_cast<double>(x)) * kOne))});
  }
  // Above: the leading one, the M bits below it, zeros above it; the bits further down are
  // unknown, so the value is log2 of the middle of [low, low + step).
  for (int msb = kMantissaBits + 1; msb < 32; ++msb) {
    const int unknown = msb - kMantissaBits;
    const uint32_t mask = ~((1u << unknown) - 1);
    for (uint32_t m = 0; m < (1u << kMantissaBits); ++m) {
      const uint32_t value = (1u << msb) | (m << unknown);
      const double middle = static_cast<double>(value) + std::ldexp(1.0, unknown) / 2;
      out.push_back({value, mask, static_cast<int32_t>(std::lround(std::log2(middle) * kOne))});
    }
  }
  return out;
}

std::vector<ExactEntry> TofinoArithmetic::gradient_exp_entries() {
  std::vector<ExactEntry> out;
  for (uint32_t key = 0; key < kGradientExpKeys; ++key) {
    const double s = static_cast<double>(static_cast<int32_t>(key) - kGradientExpOffset);
    out.push_back({key, std::llround(std::exp2(s / kOne) * kOne)});
  }
  return out;
}

std::vector<ExactEntry> TofinoArithmetic::cells_exp_entries() {
  std::vector<ExactEntry> out;
  for (uint32_t key = 0; key < kCellsExpKeys; ++key) {
    const double v = std::exp2(static_cast<double>(key) / kOne);
    out.push_back({key, std::min<int64_t>(std::llround(v), kMaxCells)});
  }
  return out;
}

int32_t TofinoArithmetic::log_constant(double x) {
  return static_cast<int32_t>(std::lround(std::log2(x) * kOne));
}

int TofinoArithmetic::beta_shift(double beta) {
  for (int k = 0; k < 16; ++k) {
    if (beta == std::ldexp(1.0, -k)) return k;
  }
  return -1;
}

TofinoArithmetic::TofinoArithmetic() {
  // Read the entries back into arrays indexed as the ternary match would resolve them.
  std::vector<bool> seen_small(small_.size()), seen(32u << kMantissaBits);
  for (const TernaryEntry& e : log2_entries()) {
    if (e.mask == 0xffffffffu && e.value < small_.size()) {
      small_[e.value] = e.result;
      seen_small[e.value] = true;
      continue;
    }
    const int msb = msb_of(e.value);
    const int unknown = msb - kMantissaBits;
    if (unknown <= 0 || e.mask != ~((1u << unknown) - 1))
      throw std::logic_error("TofinoArithmetic: a log2 entry of an unexpected shape");
    const uint32_t m = (e.value >> unknown) & ((1u << kMantissaBits) - 1);
    by_msb_[msb][m] = e.result;
    seen[(static_cast<uint32_t>(msb) << kMantissaBits) | m] = true;
  }
  for (uint32_t x = 1; x < small_.size(); ++x) {
    if (!seen_small[x]) throw std::logic_error("TofinoArithmetic: the log2 entries miss a value");
  }
  for (int msb = kMantissaBits + 1; msb < 32; ++msb) {
    for (uint32_t m = 0; m < (1u << kMantissaBits); ++m) {
      if (!seen[(static_cast<uint32_t>(msb) << kMantissaBits) | m])
        throw std::logic_error("TofinoArithmetic: the log2 entries miss a range");
    }
  }
  gradient_exp_.assign(kGradientExpKeys, 0);
  for (const ExactEntry& e : gradient_exp_entries())
    gradient_exp_.at(e.key) = static_cast<int32_t>(e.result);
  cells_exp_.assign(kCellsExpKeys, 0);
  for (const ExactEntry& e : cells_exp_entries())
    cells_exp_.at(e.key) = static_cast<uint32_t>(e.result);
}

int32_t TofinoArithmetic::log2(uint32_t x) const noexcept {
  if (x == 0) return kLogOfZero;
  if (x < small_.size()) return small_[x];
  const int msb = msb_of(x);
  return by_msb_[msb][(x >> (msb - kMantissaBits)) & ((1u << kMantissaBits) - 1)];
}

int32_t TofinoArithmetic::exp_gradient(int32_t s) const noexcept {
  const int64_t key = int64_t{s} + kGradientExpOffset;
  if (key < 0) return 0;
  return gradient_exp_[std::min<int64_t>(key, kGradientExpKeys - 1)];
}

uint32_t TofinoArithmetic::exp_cells(int32_t t) const noexcept {
  if (t < 0) return 0;
  return cells_exp_[std::min<uint32_t>(static_cast<uint32_t>(t), kCellsExpKeys - 1)];
}

int32_t TofinoArithmetic::gradient_q8(uint32_t dq, uint32_t dt_ns,
                                      int32_t log_rate) const noexcept {
  if (dq == 0 || dt_ns == 0) return 0;
  return exp_gradient(log2(dq) - log2(dt_ns) - log_rate);
}

uint32_t TofinoArithmetic::scale(int32_t g_q8, int32_t log_alpha, uint32_t b) const noexcept {
  if (g_q8 <= 0 || b == 0) return 0;
  return exp_cells(log2(static_cast<uint32_t>(g_q8)) - kQ8Log + log_alpha + log2(b));
}

uint32_t TofinoArithmetic::scale(int32_t log_alpha, uint32_t b) const noexcept {
  if (b == 0) return 0;
  return exp_cells(log_alpha + log2(b));
}

double TofinoArithmetic::divide(uint32_t a, uint32_t b) const noexcept {
  return gradient_q8(a, b, 0) / static_cast<double>(kOne);
}

double TofinoArithmetic::multiply(double g, uint32_t b) const noexcept {
  return scale(static_cast<int32_t>(std::lround(g * kOne)), 0, b);
}

const TofinoArithmetic& tofino_arithmetic() {
  static const TofinoArithmetic arithmetic;
  return arithmetic;
}

}  // namespace sharebuf::policies

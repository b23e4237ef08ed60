// The CUDA module's 64-bit division by multiplication (kernels/cuda/
// invariant_divide.h), run on the host against the CPU's division: the same
// functions the device runs, with the host's multiply-high.
#include "kernels/cuda/invariant_divide.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace braid::kernels::cuda {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Divisors at the edges of every shift (powers of two and their neighbours),
// the rank counts Avg divides by, and random ones of every width.
std::vector<uint64_t> divisors() {
  std::vector<uint64_t> out;
  for (int b = 0; b < 64; ++b)
    for (uint64_t d : {(uint64_t{1} << b) - 1, uint64_t{1} << b, (uint64_t{1} << b) + 1})
      if (d != 0) out.push_back(d);
  for (uint64_t d = 1; d <= 1024; ++d) out.push_back(d);
  out.push_back(~uint64_t{0});
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) out.push_back((rng() >> (rng() % 64)) | 1);
  return out;
}

// Dividends at the edges, near multiples of the divisor, and random ones.
std::vector<uint64_t> dividends(uint64_t d, std::mt19937_64& rng) {
  std::vector<uint64_t> out = {0,
                               1,
                               2,
                               d - 1,
                               d,
                               d + 1,
                               ~uint64_t{0},
                               ~uint64_t{0} - 1,
                               uint64_t{1} << 63,
                               (uint64_t{1} << 63) - 1,
                               (uint64_t{1} << 63) + 1};
  for (int i = 0; i < 300; ++i) {
    const uint64_t x = rng() >> (rng() % 64);
    out.push_back(x);
    const uint64_t multiple = (x / d) * d;
    for (uint64_t near : {multiple - 1, multiple, multiple + 1, multiple + d - 1}) out.push_back(near);
  }
  return out;
}

TEST(InvariantDivide, UnsignedQuotientIsTheDivisionsForEveryDivisor) {
  std::mt19937_64 rng(1);
  for (uint64_t d : divisors()) {
    const UnsignedDivisor by = unsignedDivisor(d);
    for (uint64_t x : dividends(d, rng)) ASSERT_EQ(quotient(x, by), x / d) << x << " / " << d;
  }
}

TEST(InvariantDivide, SignedQuotientTruncatesTowardZero) {
  std::mt19937_64 rng(2);
  for (uint64_t d : divisors()) {
    if (d > static_cast<uint64_t>(kMax)) continue;  // the module divides those otherwise (DivideIntBig)
    const SignedDivisor by = signedDivisor(d);
    const int64_t sd = static_cast<int64_t>(d);
    for (uint64_t bits : dividends(d, rng)) {
      for (int64_t x :
           {static_cast<int64_t>(bits), -static_cast<int64_t>(bits >> 1), kMin, kMax, int64_t{-1}}) {
        const int64_t want = x == kMin && sd == 1 ? kMin : x / sd;  // kMin / 1 is kMin; C++'s / too
        ASSERT_EQ(quotient(x, by), want) << x << " / " << d;
      }
    }
  }
}

}  // namespace
}  // namespace braid::kernels::cuda

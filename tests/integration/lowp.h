// The test suite's own encoders for the 16- and 8-bit float formats, written
// independently of src/kernels so that a shared misunderstanding cannot make
// braid and its reference agree on a wrong answer. Round to nearest even;
// only finite in-range values are ever encoded by the suite (it asserts so).
#pragma once

#include <cstdint>

namespace braid::itest {

struct FloatFormat {
  int expBits;
  int manBits;
  // e4m3 (OCP "FN"): no infinities, the all-ones exponent still holds normal
  // numbers except mantissa 111 (NaN), so its largest finite value is 448.
  bool finiteOnlyTopBinade;
};

constexpr FloatFormat kHalf{5, 10, false};
constexpr FloatFormat kBf16{8, 7, false};
constexpr FloatFormat kE4m3{4, 3, true};
constexpr FloatFormat kE5m2{5, 2, false};

// Bits of the nearest value (ties to even) to x. x must be finite and round to
// a finite value of the format; a violation aborts (a bug in the test).
uint32_t encodeFloat(const FloatFormat& f, double x);
// Exact value of bits (NaN and infinities decode to NaN / inf).
double decodeFloat(const FloatFormat& f, uint32_t bits);
// True when bits encode a finite number other than negative zero.
bool isOrdinary(const FloatFormat& f, uint32_t bits);

}  // namespace braid::itest

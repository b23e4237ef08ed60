#include "lowp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace braid::itest {
namespace {

int bias(const FloatFormat& f) { return (1 << (f.expBits - 1)) - 1; }
int topField(const FloatFormat& f) { return (1 << f.expBits) - 1; }

[[noreturn]] void die(const char* what, double x) {
  fprintf(stderr, "lowp: %s: %.17g\n", what, x);
  abort();
}

}  // namespace

uint32_t encodeFloat(const FloatFormat& f, double x) {
  if (!std::isfinite(x)) die("cannot encode non-finite value", x);
  const uint32_t sign = std::signbit(x) ? 1u : 0u;
  const uint32_t signBit = sign << (f.expBits + f.manBits);
  const double a = std::fabs(x);
  if (a == 0) return signBit;
  const int minNormalExp = 1 - bias(f);
  int e = std::max(std::ilogb(a), minNormalExp);
  // Scaling by a power of two is exact, so nearbyint (ties to even in the
  // default rounding mode) does the only rounding.
  double m = std::nearbyint(std::ldexp(a, f.manBits - e));
  const double hidden = std::ldexp(1.0, f.manBits);
  if (m >= 2 * hidden) {  // rounded up into the next binade
    m /= 2;
    ++e;
  }
  uint32_t field, mantissa;
  if (m >= hidden) {
    field = static_cast<uint32_t>(e + bias(f));
    mantissa = static_cast<uint32_t>(m - hidden);
  } else {
    field = 0;  // subnormal: e is minNormalExp here
    mantissa = static_cast<uint32_t>(m);
  }
  const uint32_t manMask = (1u << f.manBits) - 1;
  bool finite = f.finiteOnlyTopBinade ? (field < static_cast<uint32_t>(topField(f)) || mantissa != manMask)
                                      : field < static_cast<uint32_t>(topField(f));
  if (field > static_cast<uint32_t>(topField(f)) || !finite) die("out of range", x);
  return signBit | (field << f.manBits) | mantissa;
}

double decodeFloat(const FloatFormat& f, uint32_t bits) {
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t mantissa = bits & manMask;
  const int field = static_cast<int>((bits >> f.manBits) & ((1u << f.expBits) - 1));
  const bool negative = (bits >> (f.expBits + f.manBits)) & 1;
  double v;
  if (field == topField(f) && (f.finiteOnlyTopBinade ? mantissa == manMask : true)) {
    v = (!f.finiteOnlyTopBinade && mantissa == 0) ? std::numeric_limits<double>::infinity()
                                                  : std::numeric_limits<double>::quiet_NaN();
  } else if (field == 0) {
    v = std::ldexp(static_cast<double>(mantissa), 1 - bias(f) - f.manBits);
  } else {
    v = std::ldexp(static_cast<double>(mantissa | (1u << f.manBits)), field - bias(f) - f.manBits);
  }
  return negative ? -v : v;
}

bool isOrdinary(const FloatFormat& f, uint32_t bits) {
  double v = decodeFloat(f, bits);
  return std::isfinite(v) && !(v == 0 && std::signbit(v));
}

}  // namespace braid::itest

// An independent reference for the narrow float formats, for the kernel tests.
// Written from the format definitions (value = 2^(e-bias) * 1.m, subnormals at
// e = 0) with ldexp over every code and a nearest-value search; it shares no
// code with src/kernels, so a bug there cannot hide in both.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace braid::kernels::ref {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

class RefFormat {
 public:
  // ieee: all-ones exponent is inf / NaN; otherwise only all-ones is NaN (e4m3fn).
  RefFormat(int expBits, int manBits, bool ieee) : e_(expBits), m_(manBits), ieee_(ieee) {
    bias_ = (1 << (e_ - 1)) - 1;
    signBit_ = 1u << (e_ + m_);
    maxFinite_ = ieee_ ? ((((1u << e_) - 1) << m_) - 1) : (signBit_ - 2);
    for (uint32_t c = 0; c <= maxFinite_; ++c) values_.push_back(value(c));
  }

  uint32_t codes() const { return signBit_ << 1; }
  uint32_t signBit() const { return signBit_; }
  uint32_t maxFiniteCode() const { return maxFinite_; }
  uint32_t infCode() const { return ((1u << e_) - 1) << m_; }  // ieee only
  bool isNan(uint32_t c) const {
    const uint32_t mag = c & ~signBit_;
    return ieee_ ? (mag > infCode()) : (mag == signBit_ - 1);
  }
  bool isInf(uint32_t c) const { return ieee_ && (c & ~signBit_) == infCode(); }

  // Magnitude of a finite code (sign ignored), exact in double.
  double value(uint32_t c) const {
    const uint32_t mag = c & ~signBit_;
    const int e = static_cast<int>(mag >> m_);
    const int m = static_cast<int>(mag & ((1u << m_) - 1));
    if (e == 0) return std::ldexp(static_cast<double>(m), 1 - bias_ - m_);
    return std::ldexp(static_cast<double>((1 << m_) + m), e - bias_ - m_);
  }

  // Decoding: exact value with sign; NaN as a quiet fp32 NaN carrying the code's
  // mantissa as the top payload bits (braid's documented convention).
  float decode(uint32_t c) const {
    const bool neg = (c & signBit_) != 0;
    if (isNan(c)) {
      const uint32_t payload = ieee_ ? ((c & ((1u << m_) - 1)) << (23 - m_)) : 0;
      return bitsFloat((neg ? 0x80000000u : 0) | 0x7FC00000u | payload);
    }
    if (isInf(c)) return neg ? -INFINITY : INFINITY;
    const double v = value(c);
    return static_cast<float>(neg ? -v : v);
  }

  // Round to nearest, ties to even, by search over all finite values.
  uint32_t encode(float f) const {
    const uint32_t sign = std::signbit(f) ? signBit_ : 0;
    const uint32_t nanCode = ieee_ ? (infCode() | (1u << (m_ - 1))) : (signBit_ - 1);
    if (std::isnan(f)) {
      const uint32_t payload = ieee_ ? ((floatBits(f) >> (23 - m_)) & ((1u << m_) - 1)) : 0;
      return sign | nanCode | payload;
    }
    const uint32_t overflow = ieee_ ? infCode() : nanCode;
    if (std::isinf(f)) return sign | overflow;
    const double x = std::fabs(static_cast<double>(f));
    const double maxV = values_.back();
    if (x > maxV) {
      // The next value up, with an unbounded exponent, is maxV + ulp; the
      // midpoint goes to whichever code is even.
      int exp = 0;
      std::frexp(maxV, &exp);
      const double ulp = std::ldexp(1.0, exp - 1 - m_);
      const double mid = maxV + ulp / 2;
      if (x < mid || (x == mid && (maxFinite_ & 1) == 0)) return sign | maxFinite_;
      return sign | overflow;
    }
    const auto it = std::upper_bound(values_.begin(), values_.end(), x);
    const uint32_t lo = static_cast<uint32_t>(it - values_.begin()) - 1;  // values_[0] == 0 <= x
    if (values_[lo] == x || lo == maxFinite_) return sign | lo;
    const double dLo = x - values_[lo];
    const double dHi = values_[lo + 1] - x;
    if (dLo < dHi) return sign | lo;
    if (dHi < dLo) return sign | (lo + 1);
    return sign | ((lo & 1) == 0 ? lo : lo + 1);
  }

  // The midpoint between consecutive finite codes c and c+1 (magnitudes).
  double midpoint(uint32_t c) const { return (values_[c] + values_[c + 1]) / 2; }

 private:
  int e_, m_;
  bool ieee_;
  int bias_;
  uint32_t signBit_;
  uint32_t maxFinite_;
  std::vector<double> values_;  // magnitude of codes 0..maxFinite_, ascending
};

inline const RefFormat& refHalf() {
  static const RefFormat f(5, 10, true);
  return f;
}
inline const RefFormat& refBf16() {
  static const RefFormat f(8, 7, true);
  return f;
}
inline const RefFormat& refE4m3() {
  static const RefFormat f(4, 3, false);
  return f;
}
inline const RefFormat& refE5m2() {
  static const RefFormat f(5, 2, true);
  return f;
}

}  // namespace braid::kernels::ref

// The scalar conversions of convert.h as inline, constexpr, branch-light code,
// for the kernels to inline into their loops (and for convert.cc to wrap).
//
// Internal header of src/kernels. Everything here has internal linkage on
// purpose: it is compiled once per ISA (reduce_*.cc are built with different
// -m flags), and an inline function with external linkage would be merged by
// the linker, which could hand the AVX2 copy to the baseline path. For the
// same reason it avoids std:: templates that might be emitted out of line.
#pragma once

#include <cstdint>

namespace braid::kernels {
namespace {  // NOLINT: internal linkage per ISA, see above.

constexpr uint32_t bitsOf(float f) { return __builtin_bit_cast(uint32_t, f); }
constexpr float floatOf(uint32_t u) { return __builtin_bit_cast(float, u); }

// A narrow float format with kExp exponent and kMan mantissa bits. kHasInf:
// IEEE-like (all-ones exponent is inf/NaN); otherwise OCP "fn" style, where only
// all-ones exponent and mantissa is NaN and there is no inf.
template <int kExp, int kMan, bool kHasInf>
struct NarrowFormat {
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr uint32_t kManMask = (1u << kMan) - 1;
  static constexpr uint32_t kExpMax = (1u << kExp) - 1;
  static constexpr int kSignShift = kExp + kMan;
  static constexpr uint32_t kSignBit = 1u << kSignShift;
  static constexpr uint32_t kShift = 23 - kMan;  // fp32 mantissa bits dropped
  static constexpr uint32_t kInfCode = kExpMax << kMan;
  static constexpr uint32_t kNanCode = kHasInf ? (kInfCode | (1u << (kMan - 1))) : (kInfCode | kManMask);
  // Largest magnitude code a rounded finite value may take before it overflows
  // (to inf, or to NaN without inf); anything at or above the limit is clamped to it.
  static constexpr uint32_t kOverflowCode = kHasInf ? kInfCode : kNanCode;

  // fp32 bits -> code, round to nearest even, integer arithmetic only.
  static constexpr uint32_t encode(uint32_t x) {
    const uint32_t sign = (x >> 31) ? kSignBit : 0u;
    const uint32_t ax = x & 0x7FFFFFFFu;
    // Normal target: round the fp32 mantissa in place (a carry correctly bumps
    // the exponent), then rebias. Only used when ax >= the smallest normal, so
    // the subtraction cannot wrap.
    uint32_t normal = (ax + ((1u << (kShift - 1)) - 1) + ((ax >> kShift) & 1u)) >> kShift;
    normal -= static_cast<uint32_t>(127 - kBias) << kMan;
    // Subnormal target: shift the mantissa with its implicit bit right by the
    // distance to the smallest normal; shifts are clamped to [1, 25], and any
    // shift >= 25 yields 0, as it must (the value is below half the smallest
    // subnormal). fp32 subnormal inputs land here with a tiny result of 0.
    const int32_t e = static_cast<int32_t>(ax >> 23);
    int32_t sh = static_cast<int32_t>(kShift) + (128 - kBias) - e;
    sh = sh < 1 ? 1 : (sh > 25 ? 25 : sh);
    const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    const uint32_t sub = (m + ((1u << (sh - 1)) - 1) + ((m >> sh) & 1u)) >> sh;
    const uint32_t minNormalBits = static_cast<uint32_t>(128 - kBias) << 23;
    uint32_t code = ax < minNormalBits ? sub : normal;
    code = code > kOverflowCode ? kOverflowCode : code;
    // NaN: keep the payload bits that fit and set the quiet bit.
    const uint32_t nan = kHasInf ? (kNanCode | ((ax >> kShift) & kManMask)) : kNanCode;
    code = ax > 0x7F800000u ? nan : code;
    return sign | code;
  }

  // code -> fp32, exact. NaNs come back quiet with their payload.
  static constexpr float decode(uint32_t v) {
    const uint32_t sign = (v & kSignBit) ? 0x80000000u : 0u;
    const uint32_t e = (v >> kMan) & kExpMax;
    const uint32_t m = v & kManMask;
    if (kHasInf && e == kExpMax) {
      return floatOf(sign | 0x7F800000u | (m << kShift) | (m ? 0x400000u : 0u));
    }
    if (!kHasInf && e == kExpMax && m == kManMask) return floatOf(sign | 0x7FC00000u);
    if (e == 0) {
      // m * 2^(1 - bias - kMan), exact in fp32 for every format here.
      constexpr float kScale = floatOf(static_cast<uint32_t>(127 + 1 - kBias - kMan) << 23);
      const float mag = static_cast<float>(m) * kScale;
      return sign ? -mag : mag;
    }
    return floatOf(sign | ((e + 127 - kBias) << 23) | (m << kShift));
  }
};

using HalfFormat = NarrowFormat<5, 10, true>;
using E4m3Format = NarrowFormat<4, 3, false>;
using E5m2Format = NarrowFormat<5, 2, true>;

constexpr uint16_t encodeHalf(float f) { return static_cast<uint16_t>(HalfFormat::encode(bitsOf(f))); }
constexpr float decodeHalf(uint16_t h) { return HalfFormat::decode(h); }
constexpr uint8_t encodeE4m3(float f) { return static_cast<uint8_t>(E4m3Format::encode(bitsOf(f))); }
constexpr uint8_t encodeE5m2(float f) { return static_cast<uint8_t>(E5m2Format::encode(bitsOf(f))); }

// bf16 is the top half of an fp32, so rounding is one add on the bits; overflow
// to inf and subnormals fall out of the carry. NaN: truncate, set the quiet bit.
constexpr uint16_t encodeBf16(float f) {
  const uint32_t x = bitsOf(f);
  const uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}
// A shift, except that a signalling NaN comes back quiet like every other format.
constexpr float decodeBf16(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  return floatOf((x & 0x7FFFFFFFu) > 0x7F800000u ? (x | 0x400000u) : x);
}

// 256-entry decode tables for the fp8 formats (1 KiB each, stays in L1).
template <class Format>
struct Fp8Table {
  float v[256];
  constexpr Fp8Table() : v() {
    for (uint32_t i = 0; i < 256; ++i) v[i] = Format::decode(i);
  }
};
constexpr Fp8Table<E4m3Format> kE4m3Table;
constexpr Fp8Table<E5m2Format> kE5m2Table;

}  // namespace
}  // namespace braid::kernels

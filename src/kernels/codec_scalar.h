// The codecs of codec.h on one element (or one fp8 block) at a time: the
// reference semantics. The baseline runs these; the AVX2 path runs their
// vector twins (codec_avx2_ops.h) and these for tails, bit for bit the same.
//
// Internal to src/kernels, internal linkage per ISA (see convert_impl.h).
// Every float operation here is one IEEE multiply or divide that the vector
// code performs identically, so the two agree under any MXCSR mode.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/convert_impl.h"

namespace braid::kernels {
namespace {  // NOLINT: internal linkage per ISA.

constexpr uint32_t kAbsMask = 0x7FFFFFFFu;
constexpr uint32_t kInfBits = 0x7F800000u;
constexpr float kHalfMax = 65504.0f;
constexpr float kBf16Max = floatOf(0x7F7F0000u);
constexpr float kFloatMax = floatOf(0x7F7FFFFFu);

constexpr bool isFiniteBits(uint32_t x) { return (x & kAbsMask) < kInfBits; }
// Clamps to [-m, m]; NaN passes through (both compares are false).
constexpr float clampTo(float y, float m) { return y > m ? m : (y < -m ? -m : y); }

// --- Host element types. -------------------------------------------------

struct HostF32 {
  using T = float;
  static constexpr float load(float v) { return v; }
  static constexpr float store(float v) { return v; }
};
// Widening is exact (a signalling NaN comes back quiet); narrowing rounds to
// nearest even and saturates finite values at bf16's max.
struct HostBf16 {
  using T = uint16_t;
  static constexpr float load(uint16_t v) { return decodeBf16(v); }
  static constexpr uint16_t store(float v) { return encodeBf16(isFiniteBits(bitsOf(v)) ? clampTo(v, kBf16Max) : v); }
};

// --- fp16 and bf16 on the wire. --------------------------------------------
// constexpr (like everything per element here) so that the CUDA module can
// compile these very functions for the device (--expt-relaxed-constexpr).

constexpr uint16_t encodeHalfWire(float x, float scale) {
  float y = x * scale;  // may overflow to inf for finite x: saturated below
  if (isFiniteBits(bitsOf(x))) y = clampTo(y, kHalfMax);
  return encodeHalf(y);
}
constexpr float decodeHalfWire(uint16_t h, float scale) { return decodeHalf(h) / scale; }

constexpr uint16_t encodeBf16Wire(float x) { return HostBf16::store(x); }
constexpr float decodeBf16Wire(uint16_t b) { return decodeBf16(b); }

// --- fp8 blocks. --------------------------------------------------------------

// The two fp8 wire formats. Both maxima are 1.75 * 2^kMaxExp (448, 57344).
struct E4m3Wire {
  using Format = E4m3Format;
  static constexpr int kMaxExp = 8;
  static float decode(uint8_t c) { return kE4m3Table.v[c]; }
};
struct E5m2Wire {
  using Format = E5m2Format;
  static constexpr int kMaxExp = 15;
  static float decode(uint8_t c) { return kE5m2Table.v[c]; }
};

// k, where 2^k is the largest power of two with amax * 2^k <= 1.75 * 2^maxExp,
// capped at 126 (so 2^k and 2^-k are both normal fp32). amaxBits: |amax| as
// fp32 bits, finite; 0 (an all-zero or all-non-finite block) gives k = 0.
constexpr int fp8BlockExponent(uint32_t amaxBits, int maxExp) {
  if (amaxBits == 0) return 0;
  if (amaxBits < 0x00800000u) return 126;  // fp32 subnormal
  const int e = static_cast<int>(amaxBits >> 23) - 127;
  const int k = maxExp - e - ((amaxBits & 0x7FFFFFu) > 0x600000u ? 1 : 0);
  return k > 126 ? 126 : k;
}
constexpr float powerOfTwo(int k) { return floatOf(static_cast<uint32_t>(127 + k) << 23); }

// Bits of |x| if finite, else 0: what the block's amax is taken over.
constexpr uint32_t finiteAbsBits(float x) {
  const uint32_t a = bitsOf(x) & kAbsMask;
  return a < kInfBits ? a : 0u;
}

// A decoded fp8 value times the block's scale. A finite code stays finite.
constexpr float scaleDecoded(float q, float scale) {
  const float r = q * scale;
  return isFiniteBits(bitsOf(q)) ? clampTo(r, kFloatMax) : r;
}

// Writes the 4-byte header and the n codes of one block (n <= blockSize).
template <class Host, class Wire>
void encodeFp8BlockScalar(const typename Host::T* src, size_t n, uint8_t* dst) {
  uint32_t amax = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t a = finiteAbsBits(Host::load(src[i]));
    amax = a > amax ? a : amax;
  }
  const int k = fp8BlockExponent(amax, Wire::kMaxExp);
  const float scale = powerOfTwo(-k);
  const float mul = powerOfTwo(k);
  __builtin_memcpy(dst, &scale, sizeof(scale));
  for (size_t i = 0; i < n; ++i) {
    dst[4 + i] = static_cast<uint8_t>(Wire::Format::encode(bitsOf(Host::load(src[i]) * mul)));
  }
}

// Codes from index `from` to n of a block whose scale is known.
template <class Host, class Wire>
void decodeFp8Codes(const uint8_t* codes, float scale, size_t from, size_t n, typename Host::T* dst) {
  for (size_t i = from; i < n; ++i) dst[i] = Host::store(scaleDecoded(Wire::decode(codes[i]), scale));
}

inline float readScale(const uint8_t* block) {
  float scale;
  __builtin_memcpy(&scale, block, sizeof(scale));
  return scale;
}

}  // namespace
}  // namespace braid::kernels

// AVX2 + F16C twins of codec_scalar.h: 8 elements per step, in registers.
// Each function matches its scalar counterpart bit for bit (tests/unit/kernels/
// codec_dispatch_test.cc checks), using the narrow-format building blocks of
// reduce_avx2_ops.h. Tails under 8 elements go to the scalar code.
//
// Internal to src/kernels, included by codec_impl.h only under -mavx2 -mf16c;
// internal linkage for the reason given in convert_impl.h.
#pragma once

#if !defined(__AVX2__) || !defined(__F16C__)
#error "codec_avx2_ops.h needs -mavx2 -mf16c"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/codec_scalar.h"
#include "kernels/reduce_avx2_ops.h"

namespace braid::kernels {
namespace {  // NOLINT: internal linkage per ISA.

// All-ones lanes where x is finite (not inf, not NaN).
inline __m256 finiteMask(__m256 x) {
  const __m256 ax = _mm256_and_ps(x, _mm256_castsi256_ps(splat(kAbsMask)));
  return _mm256_cmp_ps(ax, _mm256_castsi256_ps(splat(kInfBits)), _CMP_LT_OQ);
}
// clampTo(y, m) in the lanes where `where` is finite, y elsewhere. min / max
// return their second operand when one is NaN, so a NaN y passes through
// unchanged, as in clampTo.
inline __m256 clampWhereFinite(__m256 y, __m256 where, float m) {
  const __m256 c = _mm256_min_ps(_mm256_set1_ps(m), _mm256_max_ps(_mm256_set1_ps(-m), y));
  return _mm256_blendv_ps(y, c, finiteMask(where));
}

// bf16 codes -> fp32, quieting signalling NaNs like decodeBf16.
inline __m256 loadBf16Quiet(const uint16_t* p) {
  const __m256i x = _mm256_castps_si256(Bf16Vec::load(p));
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, splat(kAbsMask)), splat(kInfBits));
  return _mm256_castsi256_ps(_mm256_or_si256(x, _mm256_and_si256(nan, splat(0x400000u))));
}

// --- Host element types (Scalar: the codec_scalar.h twin for tails). -------

struct HostF32Vec {
  using Scalar = HostF32;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
};
// load() leaves a signalling NaN signalling; every use of it either multiplies
// (which quiets it, keeping the payload, as decodeBf16 would have) or stores
// it through Bf16Vec::store, which quiets it the same way.
struct HostBf16Vec {
  using Scalar = HostBf16;
  static __m256 load(const uint16_t* p) { return Bf16Vec::load(p); }
  static void store(uint16_t* p, __m256 v) { Bf16Vec::store(p, clampWhereFinite(v, v, kBf16Max)); }
};

// --- fp16 and bf16 on the wire. --------------------------------------------

template <class H, class T>
void encodeHalfVec(const T* src, size_t n, uint16_t* dst, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = H::load(src + i);
    const __m256 y = clampWhereFinite(_mm256_mul_ps(x, s), x, kHalfMax);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) dst[i] = encodeHalfWire(H::Scalar::load(src[i]), scale);
}

template <class H, class T>
void decodeHalfVec(const uint16_t* src, size_t n, T* dst, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) H::store(dst + i, _mm256_div_ps(HalfVec::load(src + i), s));
  for (; i < n; ++i) dst[i] = H::Scalar::store(decodeHalfWire(src[i], scale));
}

template <class H, class T>
void encodeBf16Vec(const T* src, size_t n, uint16_t* dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) HostBf16Vec::store(dst + i, H::load(src + i));
  for (; i < n; ++i) dst[i] = encodeBf16Wire(H::Scalar::load(src[i]));
}

template <class H, class T>
void decodeBf16Vec(const uint16_t* src, size_t n, T* dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) H::store(dst + i, loadBf16Quiet(src + i));
  for (; i < n; ++i) dst[i] = H::Scalar::store(decodeBf16Wire(src[i]));
}

// --- fp8 blocks. --------------------------------------------------------------

inline uint32_t horizontalMaxU32(__m256i v) {
  __m128i m = _mm_max_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(m));
}

// Vector encodeFp8BlockScalar: amax pass, then the scaled encode (the block
// is still in L1 for the second pass).
template <class H, class Wire, class T>
void encodeFp8BlockVec(const T* src, size_t n, uint8_t* dst) {
  __m256i vmax = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_and_si256(_mm256_castps_si256(H::load(src + i)), splat(kAbsMask));
    const __m256i nonFinite = _mm256_cmpgt_epi32(a, splat(kInfBits - 1));
    vmax = _mm256_max_epu32(vmax, _mm256_andnot_si256(nonFinite, a));
  }
  uint32_t amax = horizontalMaxU32(vmax);
  for (; i < n; ++i) {
    const uint32_t a = finiteAbsBits(H::Scalar::load(src[i]));
    amax = a > amax ? a : amax;
  }
  const int k = fp8BlockExponent(amax, Wire::kMaxExp);
  const float scale = powerOfTwo(-k);
  const float mul = powerOfTwo(k);
  __builtin_memcpy(dst, &scale, sizeof(scale));
  uint8_t* codes = dst + 4;
  const __m256 m = _mm256_set1_ps(mul);
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 y = _mm256_mul_ps(H::load(src + i), m);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(codes + i),
                     pack32To8(encodeNarrow<typename Wire::Format>(y)));
  }
  for (; i < n; ++i) {
    codes[i] = static_cast<uint8_t>(Wire::Format::encode(bitsOf(H::Scalar::load(src[i]) * mul)));
  }
}

// WireVec: E4m3Vec or E5m2Vec (reduce_avx2_ops.h), which widen 8 codes exactly.
template <class H, class Wire, class WireVec, class T>
void decodeFp8BlockVec(const uint8_t* block, size_t n, T* dst) {
  const float scale = readScale(block);
  const uint8_t* codes = block + 4;
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 q = WireVec::load(codes + i);
    H::store(dst + i, clampWhereFinite(_mm256_mul_ps(q, s), q, kFloatMax));
  }
  decodeFp8Codes<typename H::Scalar, Wire>(codes, scale, i, n, dst);
}

}  // namespace
}  // namespace braid::kernels

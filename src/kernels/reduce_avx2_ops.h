// AVX2 + F16C building blocks for the narrow float formats: 8 elements at a
// time widened to one __m256 of fp32, combined, and rounded back, all in
// registers. Each function is the vector twin of a scalar one in
// convert_impl.h / reduce_impl.h and matches it bit for bit (tests/unit/kernels
// checks every code and every fp8 pair against the baseline and a reference).
//
// Internal to src/kernels, included by reduce_impl.h only when compiled with
// -mavx2 -mf16c; internal linkage for the reason given there.
#pragma once

#if !defined(__AVX2__) || !defined(__F16C__)
#error "reduce_avx2_ops.h needs -mavx2 -mf16c"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/convert_impl.h"
#include "kernels/reduce_ops.h"

namespace braid::kernels {
namespace {  // NOLINT: internal linkage per ISA.

// Packs eight 32-bit lanes holding values < 2^16 (resp. < 2^8) into 16-bit
// (8-bit) elements, in order.
inline __m128i pack32To16(__m256i v) {
  return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}
inline __m128i pack32To8(__m256i v) {
  const __m128i w = pack32To16(v);
  return _mm_packus_epi16(w, w);
}
inline __m256i splat(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }

// Vector NarrowFormat<...>::encode: fp32 bits -> code, one lane each.
template <class Format>
inline __m256i encodeNarrow(__m256 f) {
  const __m256i x = _mm256_castps_si256(f);
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 31 - Format::kSignShift), splat(Format::kSignBit));
  const __m256i ax = _mm256_and_si256(x, splat(0x7FFFFFFFu));
  constexpr int kShift = static_cast<int>(Format::kShift);
  // Normal.
  __m256i normal = _mm256_add_epi32(ax, splat((1u << (kShift - 1)) - 1));
  normal = _mm256_add_epi32(normal, _mm256_and_si256(_mm256_srli_epi32(ax, kShift), splat(1)));
  normal = _mm256_sub_epi32(_mm256_srli_epi32(normal, kShift),
                            splat(static_cast<uint32_t>(127 - Format::kBias) << (23 - kShift)));
  // Subnormal, shift clamped to [1, 25].
  const __m256i e = _mm256_srli_epi32(ax, 23);
  __m256i sh = _mm256_sub_epi32(splat(static_cast<uint32_t>(kShift + 128 - Format::kBias)), e);
  sh = _mm256_min_epi32(_mm256_max_epi32(sh, splat(1)), splat(25));
  const __m256i m = _mm256_or_si256(_mm256_and_si256(ax, splat(0x7FFFFFu)), splat(0x800000u));
  const __m256i half = _mm256_sub_epi32(_mm256_sllv_epi32(splat(1), _mm256_sub_epi32(sh, splat(1))), splat(1));
  __m256i sub = _mm256_add_epi32(_mm256_add_epi32(m, half), _mm256_and_si256(_mm256_srlv_epi32(m, sh), splat(1)));
  sub = _mm256_srlv_epi32(sub, sh);
  // Select, clamp overflow (signed compares are fine: every value is < 2^31).
  const __m256i isSub = _mm256_cmpgt_epi32(splat(static_cast<uint32_t>(128 - Format::kBias) << 23), ax);
  __m256i code = _mm256_blendv_epi8(normal, sub, isSub);
  code = _mm256_min_epi32(code, splat(Format::kOverflowCode));
  __m256i nan = splat(Format::kNanCode);
  if constexpr (Format::kOverflowCode != Format::kNanCode) {  // has inf: keep payload bits
    nan = _mm256_or_si256(nan, _mm256_and_si256(_mm256_srli_epi32(ax, kShift), splat(Format::kManMask)));
  }
  code = _mm256_blendv_epi8(code, nan, _mm256_cmpgt_epi32(ax, splat(0x7F800000u)));
  return _mm256_or_si256(code, sign);
}

struct HalfVec {
  using Storage = uint16_t;
  static __m256 load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void store(uint16_t* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
};

// load() is a plain shift: unlike decodeBf16 it leaves a signalling NaN
// signalling. Every kernel result passes through store(), which quiets NaNs the
// same way (and fp32 arithmetic on an sNaN quiets it, keeping the payload), so
// the bits written are those of the scalar path.
struct Bf16Vec {
  using Storage = uint16_t;
  static __m256 load(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static void store(uint16_t* p, __m256 v) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), splat(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, splat(0x7FFFu)), lsb), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), splat(0x40u));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, splat(0x7FFFFFFFu)), splat(0x7F800000u));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), pack32To16(_mm256_blendv_epi8(rounded, quiet, nan)));
  }
};

// e5m2 is the top byte of an fp16, so it widens exactly through F16C.
struct E5m2Vec {
  using Storage = uint8_t;
  static __m256 load(const uint8_t* p) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm256_cvtph_ps(_mm_slli_epi16(b, 8));
  }
  static void store(uint8_t* p, __m256 v) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), pack32To8(encodeNarrow<E5m2Format>(v)));
  }
};

// e4m3 magnitudes placed in an fp16's bits (<< 7) are the value / 256, for
// normals and subnormals alike; the one NaN code is mapped to fp16's quiet NaN.
struct E4m3Vec {
  using Storage = uint8_t;
  static __m256 load(const uint8_t* p) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    const __m128i mag = _mm_and_si128(b, _mm_set1_epi16(0x7F));
    const __m128i sign = _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8);
    const __m128i isNan = _mm_cmpeq_epi16(mag, _mm_set1_epi16(0x7F));
    const __m128i h = _mm_blendv_epi8(_mm_slli_epi16(mag, 7), _mm_set1_epi16(0x7E00), isNan);
    return _mm256_mul_ps(_mm256_cvtph_ps(_mm_or_si128(h, sign)), _mm256_set1_ps(256.0f));
  }
  static void store(uint8_t* p, __m256 v) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), pack32To8(encodeNarrow<E4m3Format>(v)));
  }
};

// The ops of reduce_impl.h on eight fp32 lanes.
inline __m256 vecApply(SumOp, __m256 a, __m256 b) { return _mm256_add_ps(a, b); }
inline __m256 vecApply(ProdOp, __m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
inline __m256 vecApply(MaxOp, __m256 a, __m256 b) {
  const __m256 pickA = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  const __m256 m = _mm256_blendv_ps(b, a, pickA);
  return _mm256_blendv_ps(m, _mm256_and_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
}
inline __m256 vecApply(MinOp, __m256 a, __m256 b) {
  const __m256 pickA = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  const __m256 m = _mm256_blendv_ps(b, a, pickA);
  return _mm256_blendv_ps(m, _mm256_or_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
}

}  // namespace
}  // namespace braid::kernels

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

// Vector NarrowFormat<...>::encode, in three steps that the fp8 block encoder
// (codec_avx2_ops.h) also uses one by one.
//
// narrowMagnitude: the code of y = |x| * 2^k (ax: fp32 bits of |x|; k: see
// NarrowScale), for finite x whose code does not overflow; larger and
// non-finite x give some code above Format::kOverflowCode. The FPU rounds, but
// without depending on MXCSR: |x| is multiplied by the power of two
// s = 2^(k + kMan - E) that puts the target's quantum in y's binade E at 1 (E
// clamped below at the target's smallest normal exponent Emin, so that its
// subnormals share that binade's quantum), vroundps rounds the product t to an
// integer q with its own round-to-nearest-even, and the code is q plus the
// binade's offset (E - Emin) << kMan. q runs from 2^kMan (the implicit bit) to
// 2^(kMan+1), where a carry lands in the next binade as it should, or from 0
// in the subnormal range. t = |x| * s is exact (t < 2^(kMan+1)) unless it
// underflows, and then it is far below 1/2 and q is 0 either way.
//
// Exactly the scalar encode of fp32 bits y = x * 2^k as long as that product
// is exact or too small to have a nonzero code, which is the case for every
// product of a finite x by a normal power of two. An fp32 subnormal x has
// exponent field 0, read here as 2^-127: right for the binade clamp while
// -127 + k <= Emin, which every k <= kMaxK satisfies. Under DAZ it reads as 0
// here, as it does in the scalar x * 2^k. s stays a normal fp32 power of two
// for every k <= kMaxK down to maxExp - 128 (the smallest block exponent of
// codec_scalar.h) while y stays within the format (E <= maxExp), and for k = 0
// with any x (E <= 128), since kMan >= 2. k = 0 encodes x itself.
template <class Format>
struct NarrowScale {
  static constexpr int kMan = 23 - static_cast<int>(Format::kShift);
  static constexpr int kMaxK = 128 - kMan - Format::kBias;
  __m256i minExp;  // fp32 exponent field of 2^(Emin - k), as bits
  __m256i sBase;   // that of 2^(k + kMan - Emin), s for the smallest binades
  explicit NarrowScale(int k)
      : minExp(splat(static_cast<uint32_t>(128 - Format::kBias - k) << 23)),
        sBase(splat(static_cast<uint32_t>(126 + kMan + Format::kBias + k) << 23)) {}
};

template <class Format>
inline __m256i narrowMagnitude(__m256i ax, const NarrowScale<Format>& c) {
  // d = (E - Emin) << 23: the 16-bit saturating subtract clamps at 0 (the low
  // halves are zero in both operands).
  const __m256i d = _mm256_subs_epu16(_mm256_and_si256(ax, splat(0x7F800000u)), c.minExp);
  const __m256i s = _mm256_sub_epi32(c.sBase, d);
  const __m256 t = _mm256_mul_ps(_mm256_castsi256_ps(ax), _mm256_castsi256_ps(s));
  // inf and NaN give q = INT_MIN, so the code is >= 2^31.
  const __m256i q = _mm256_cvttps_epi32(_mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return _mm256_add_epi32(q, _mm256_srli_epi32(d, Format::kShift));
}

// narrowSpecials: a narrowMagnitude code of ax for any ax, as the scalar
// encode has it: overflow (and inf) clamped to kOverflowCode, NaN to the NaN
// code (with its top payload bits where the format has inf).
template <class Format>
inline __m256i narrowSpecials(__m256i code, __m256i ax) {
  code = _mm256_min_epu32(code, splat(Format::kOverflowCode));
  if constexpr (Format::kOverflowCode != Format::kNanCode) {  // has inf: NaN is not the clamp
    const __m256i nan =
        _mm256_or_si256(splat(Format::kNanCode),
                        _mm256_and_si256(_mm256_srli_epi32(ax, Format::kShift), splat(Format::kManMask)));
    code = _mm256_blendv_epi8(code, nan, _mm256_cmpgt_epi32(ax, splat(0x7F800000u)));
  }
  return code;
}

// fp32 bits -> code, one lane each.
template <class Format>
inline __m256i encodeNarrow(__m256 f) {
  const __m256i x = _mm256_castps_si256(f);
  const __m256i ax = _mm256_and_si256(x, splat(0x7FFFFFFFu));
  const __m256i sign =
      _mm256_and_si256(_mm256_srli_epi32(x, 31 - Format::kSignShift), splat(Format::kSignBit));
  return _mm256_or_si256(narrowSpecials<Format>(narrowMagnitude<Format>(ax, NarrowScale<Format>(0)), ax),
                         sign);
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

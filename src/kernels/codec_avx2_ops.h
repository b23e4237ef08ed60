// AVX2 + F16C twins of codec_scalar.h: 8 elements per step (32 for the fp8
// encoder), in registers. Each function matches its scalar counterpart bit for
// bit (tests/unit/kernels/codec_dispatch_test.cc checks), using the
// narrow-format building blocks of reduce_avx2_ops.h. Tails under 8 elements
// go to the scalar code.
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
inline uint32_t horizontalMaxU16(__m256i v) {
  const __m128i m = _mm_max_epu16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  // The largest is the smallest of the complements.
  const __m128i ones = _mm_set1_epi16(-1);
  return 0xFFFFu -
         static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(m, ones))) & 0xFFFF);
}

// The fp8 block loops see the host values 32 at a time, as four __m256 of
// fp32 in an order of the host type's choosing; packCodes() undoes it.
//   absMaxBits: the largest |x| as fp32 bits, non-finite values included.
//   finiteAbsMaxBits: the same over finite values only (what fp8BlockExponent
//     takes); only needed when absMaxBits found an inf or NaN.
//   load32: src[0, 32) as four vectors; packOrder: the permutation of 32-bit
//     groups of four codes that puts packCodes()'s bytes back in source order.
struct HostF32Fp8 {
  using Vec = HostF32Vec;
  static uint32_t absMaxBits(const float* src, size_t n) {
    __m256i m0 = _mm256_setzero_si256(), m1 = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      m0 = _mm256_max_epu32(
          m0,
          _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), splat(kAbsMask)));
      m1 = _mm256_max_epu32(
          m1, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 8)),
                               splat(kAbsMask)));
    }
    uint32_t amax = horizontalMaxU32(_mm256_max_epu32(m0, m1));
    for (; i < n; ++i) amax = (bitsOf(src[i]) & kAbsMask) > amax ? bitsOf(src[i]) & kAbsMask : amax;
    return amax;
  }
  static uint32_t finiteAbsMaxBits(const float* src, size_t n) {
    __m256i vmax = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256i a =
          _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), splat(kAbsMask));
      vmax = _mm256_max_epu32(vmax, _mm256_andnot_si256(_mm256_cmpgt_epi32(a, splat(kInfBits - 1)), a));
    }
    uint32_t amax = horizontalMaxU32(vmax);
    for (; i < n; ++i) amax = finiteAbsBits(src[i]) > amax ? finiteAbsBits(src[i]) : amax;
    return amax;
  }
  static void load32(const float* p, __m256 y[4]) {
    for (int j = 0; j < 4; ++j) y[j] = _mm256_loadu_ps(p + 8 * j);
  }
  static __m256i packOrder(__m256i v) {
    return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  }
};

struct HostBf16Fp8 {
  using Vec = HostBf16Vec;
  static uint32_t absMaxBits(const uint16_t* src, size_t n) {
    __m256i vmax = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      vmax = _mm256_max_epu16(vmax, _mm256_and_si256(x, _mm256_set1_epi16(0x7FFF)));
    }
    uint32_t amax = horizontalMaxU16(vmax);
    for (; i < n; ++i) amax = (src[i] & 0x7FFFu) > amax ? src[i] & 0x7FFFu : amax;
    return amax << 16;
  }
  static uint32_t finiteAbsMaxBits(const uint16_t* src, size_t n) {
    __m256i vmax = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256i a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)),
                                         _mm256_set1_epi16(0x7FFF));
      vmax = _mm256_max_epu16(vmax, _mm256_andnot_si256(_mm256_cmpgt_epi16(a, _mm256_set1_epi16(0x7F7F)), a));
    }
    uint32_t amax = horizontalMaxU16(vmax) << 16;
    for (; i < n; ++i)
      amax = finiteAbsBits(decodeBf16(src[i])) > amax ? finiteAbsBits(decodeBf16(src[i])) : amax;
    return amax;
  }
  // Each 128-bit half of the 16 codes widens to fp32 in two vectors, the low
  // four codes of each half first; the 32-to-16 bit pack puts them back in order.
  static void load32(const uint16_t* p, __m256 y[4]) {
    for (int j = 0; j < 2; ++j) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 * j));
      y[2 * j] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), h));
      y[2 * j + 1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), h));
    }
  }
  static __m256i packOrder(__m256i v) { return _mm256_permute4x64_epi64(v, _MM_SHUFFLE(3, 1, 2, 0)); }
};

// 32 codes of magnitudes c (each < 128) of the values y -> 32 bytes sign | code,
// in the order of H's load32. The signs ride along through the signed packs,
// which keep each lane's sign (-0 included: its bits are INT_MIN).
template <class H>
inline __m256i packCodes(const __m256i c[4], const __m256 y[4]) {
  const __m256i codes = _mm256_packus_epi16(_mm256_packus_epi32(c[0], c[1]), _mm256_packus_epi32(c[2], c[3]));
  const __m256i signs =
      _mm256_packs_epi16(_mm256_packs_epi32(_mm256_castps_si256(y[0]), _mm256_castps_si256(y[1])),
                         _mm256_packs_epi32(_mm256_castps_si256(y[2]), _mm256_castps_si256(y[3])));
  return H::packOrder(
      _mm256_or_si256(codes, _mm256_and_si256(signs, _mm256_set1_epi8(static_cast<char>(0x80)))));
}

// One block of n values with exponent k: writes the 4-byte scale and the
// codes. kFused: the block is finite and k <= NarrowScale's kMaxK, so
// narrowMagnitude applies 2^k itself, and no |x| * 2^k needs a clamp (k comes
// from the block's amax). Otherwise each value is multiplied by 2^k first, as
// the scalar code does, and inf, NaN (and, for tiny blocks, nothing else) go
// through narrowSpecials.
template <class H, class Wire, bool kFused, class T>
void encodeFp8Block(const T* src, size_t n, uint8_t* dst, int k) {
  using Format = typename Wire::Format;
  const float scale = powerOfTwo(-k);
  const float mul = powerOfTwo(k);
  __builtin_memcpy(dst, &scale, sizeof(scale));
  uint8_t* codes = dst + 4;
  const __m256 m = _mm256_set1_ps(mul);
  const NarrowScale<Format> c32(kFused ? k : 0);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 y[4];
    __m256i c[4];
    H::load32(src + i, y);
    for (int j = 0; j < 4; ++j) {
      if constexpr (!kFused) y[j] = _mm256_mul_ps(y[j], m);
      const __m256i ax = _mm256_and_si256(_mm256_castps_si256(y[j]), splat(kAbsMask));
      c[j] = narrowMagnitude<Format>(ax, c32);
      if constexpr (!kFused) c[j] = narrowSpecials<Format>(c[j], ax);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), packCodes<H>(c, y));
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 y = _mm256_mul_ps(H::Vec::load(src + i), m);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(codes + i), pack32To8(encodeNarrow<Format>(y)));
  }
  for (; i < n; ++i) {
    codes[i] = static_cast<uint8_t>(Format::encode(bitsOf(H::Vec::Scalar::load(src[i]) * mul)));
  }
}

// Vector encodeFp8BlockScalar over whole blocks of `block` values (the last
// may be shorter), in groups: first each block's exponent, then the codes of
// each. The amax passes of a group are independent of one another, so their
// horizontal reductions overlap, and no encode loop waits on one. The amax
// pass takes every |x|; only a block holding an inf or NaN needs the second
// look that leaves them out (and the encode that handles them). A group is
// about 4 KiB of source (4 blocks of the default 256 fp32 values), which
// measured best: it is still in L1 for the encode, and larger groups lost
// bandwidth on inputs far larger than the caches.
template <class H, class Wire, class T>
void encodeFp8BlocksVec(const T* src, size_t n, uint8_t* dst, size_t block) {
  using Format = typename Wire::Format;
  struct Exponent {
    int k;
    bool fused;
  };
  constexpr size_t kMaxGroup = 64;
  const size_t perGroup = 4096 / sizeof(T) / block;
  const size_t group = (perGroup < 1 ? 1 : (perGroup > kMaxGroup ? kMaxGroup : perGroup)) * block;
  Exponent ks[kMaxGroup];
  for (size_t g = 0; g < n; g += group) {
    const size_t groupEnd = n - g < group ? n : g + group;
    size_t b = 0;
    for (size_t i = g; i < groupEnd; i += block, ++b) {
      const size_t m = groupEnd - i < block ? groupEnd - i : block;
      uint32_t amax = H::absMaxBits(src + i, m);
      const bool finite = amax < kInfBits;
      if (!finite) amax = H::finiteAbsMaxBits(src + i, m);
      const int k = fp8BlockExponent(amax, Wire::kMaxExp);
      ks[b] = {k, finite && k <= NarrowScale<Format>::kMaxK};
    }
    b = 0;
    for (size_t i = g; i < groupEnd; i += block, ++b) {
      const size_t m = groupEnd - i < block ? groupEnd - i : block;
      if (ks[b].fused) {
        encodeFp8Block<H, Wire, true>(src + i, m, dst, ks[b].k);
      } else {
        encodeFp8Block<H, Wire, false>(src + i, m, dst, ks[b].k);
      }
      dst += 4 + m;
    }
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

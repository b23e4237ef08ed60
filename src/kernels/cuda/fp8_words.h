// fp8 reductions four codes (one 32-bit word) at a time, for reduce.cu.
//
// Widening every code to fp32 and back (convert_fast.h) costs six conversion
// instructions per element, and the device's conversion units, not memory,
// then set the pace (an H200 ran fp8 sums at 0.56 of a copy). Here:
//   - Sum and Prod widen two codes per instruction to an fp16 pair (every
//     e4m3 and e5m2 value is an exact fp16; e5m2 is the top byte of its fp16,
//     so it needs only a byte permute), add or multiply the pair, and narrow
//     it back with one instruction: 1.5 conversions per element for e4m3, 0.5
//     for e5m2.
//   - Max and Min never convert: the result is one of the inputs, so they
//     compare the codes as integers.
// The bits are convert_impl.h's fp32 path's (reduce.h), for every pair of
// inputs; braid-cuda-bench --verify checks all 2^16 pairs of each format and
// op on the device. Why they agree:
//   - Prod: the exact product of two e4m3 (4 significant bits each) or e5m2
//     (3 bits) codes fits fp16, down to e4m3's smallest products (2^-18) and
//     to 2^-18 for e5m2, below which fp16 may round but the fp8 result is a
//     signed zero either way. One rounding, as in fp32.
//   - Sum: fp16 rounds the exact sum, the narrowing rounds again. Rounding
//     twice to nearest gives the single rounding's result when the wider
//     precision is at least twice the narrower's plus two (11 >= 2 * 4 + 2;
//     Figueroa, "When is double rounding innocuous?", 1995), and sums below
//     the fp8 normal range are exact multiples of its smallest subnormal.
//   - Overflow: the narrowing instruction saturates, braid overflows (e4m3
//     to NaN above 464, e5m2 to inf from 61440), so results past the limit
//     take the overflow code. An fp16 result exactly on the limit is
//     ambiguous (the exact sum may lie on either side of it): those words
//     take the scalar fp32 path.
//   - NaN: Sum and Prod give the instruction's NaN (reduce.h promises a NaN,
//     not which); Max and Min keep a's NaN, else b's, quieted as
//     convert_impl.h's round trip quiets it.
// sm_89 and later only (the fp8 conversion instructions); reduce.cu keeps
// the per-element path elsewhere.
#pragma once

#if defined(__CUDACC__)
#include <cstdint>

#include "kernels/reduce_ops.h"

namespace braid::kernels::cuda {
namespace {  // NOLINT: internal linkage, as convert_fast.h.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
constexpr bool kFp8WordsOnDevice = true;
#else
constexpr bool kFp8WordsOnDevice = false;
#endif

// What differs between the two formats, per 16-bit fp16 result h.
struct E4m3Words {
  // fp16 of 464: above it e4m3 overflows to NaN; exactly it, ambiguous.
  static constexpr uint32_t kLimit = 0x5F40u;
  static constexpr uint32_t kOverflowUpTo = 0xFFFFu;  // every magnitude past the limit, NaN included
  static constexpr uint32_t kOverflowCode = 0x7Fu;    // NaN
  __device__ static uint32_t isNan(uint32_t w) { return __vcmpeq4(w & 0x7F7F7F7Fu, 0x7F7F7F7Fu); }
  __device__ static uint32_t quiet(uint32_t w) { return w; }  // one NaN code per sign
  // Codes 2 * pair and 2 * pair + 1 of w as an fp16 pair (low code, low half).
  __device__ static uint32_t widen(uint32_t w, int pair) {
    uint32_t h2 = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<uint16_t>(w >> (16 * pair))));
#endif
    return h2;
  }
  __device__ static uint32_t narrow(uint32_t h2) {
    uint16_t c = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(c) : "r"(h2));
#endif
    return c;
  }
};

struct E5m2Words {
  // fp16 of 61440: past it e5m2 overflows to inf (NaN magnitudes keep the
  // instruction's NaN); exactly it, ambiguous.
  static constexpr uint32_t kLimit = 0x7B80u;
  static constexpr uint32_t kOverflowUpTo = 0x7C00u;
  static constexpr uint32_t kOverflowCode = 0x7Cu;  // inf
  __device__ static uint32_t isNan(uint32_t w) { return __vcmpgtu4(w & 0x7F7F7F7Fu, 0x7C7C7C7Cu); }
  __device__ static uint32_t quiet(uint32_t w) { return w | 0x02020202u; }
  __device__ static uint32_t widen(uint32_t w, int pair) {
    return __byte_perm(w, 0u, pair == 0 ? 0x1404u : 0x3424u);  // code k -> the top byte of half k
  }
  __device__ static uint32_t narrow(uint32_t h2) {
    uint16_t c = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(c) : "r"(h2));
#endif
    return c;
  }
};

__device__ __forceinline__ uint32_t halves(uint32_t a, uint32_t b, SumOp) {
  uint32_t r;
  asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ uint32_t halves(uint32_t a, uint32_t b, ProdOp) {
  uint32_t r;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

// Sum or Prod of four codes. Sets *ambiguous when a result lies exactly on
// the overflow limit (the caller redoes that word element by element).
template <class W, class Op>
__device__ __forceinline__ uint32_t arithmeticWord(uint32_t a, uint32_t b, bool* ambiguous) {
  uint32_t out = 0;
#pragma unroll
  for (int pair = 0; pair < 2; ++pair) {
    const uint32_t r = halves(W::widen(a, pair), W::widen(b, pair), Op{});
    const uint32_t codes = W::narrow(r);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const uint32_t h = (r >> (16 * k)) & 0xFFFFu, magnitude = h & 0x7FFFu;
      uint32_t code = (codes >> (8 * k)) & 0xFFu;
      if (magnitude > W::kLimit && magnitude <= W::kOverflowUpTo)
        code = ((h >> 8) & 0x80u) | W::kOverflowCode;
      *ambiguous |= magnitude == W::kLimit;
      out |= code << (8 * (2 * pair + k));
    }
  }
  return out;
}

// Max or Min of four codes. As integers, a code whose sign bit is set, with
// its other seven bits flipped, orders as its value does among signed bytes
// (and -0 just below +0, as reduce.h wants); equal keys are equal codes.
template <class W, bool kMax>
__device__ __forceinline__ uint32_t selectWord(uint32_t a, uint32_t b) {
  const auto key = [](uint32_t w) { return w ^ (((w & 0x80808080u) >> 7) * 0x7Fu); };
  const uint32_t ka = key(a), kb = key(b);
  const uint32_t picked = key(kMax ? __vmaxs4(ka, kb) : __vmins4(ka, kb));
  const uint32_t nanA = W::isNan(a), nanB = W::isNan(b) & ~nanA;
  return (picked & ~(nanA | nanB)) | (W::quiet(a) & nanA) | (W::quiet(b) & nanB);
}

template <class W, class Op>
struct Fp8WordOp;
template <class W>
struct Fp8WordOp<W, SumOp> {
  __device__ static uint32_t apply(uint32_t a, uint32_t b, bool* ambiguous) {
    return arithmeticWord<W, SumOp>(a, b, ambiguous);
  }
};
template <class W>
struct Fp8WordOp<W, ProdOp> {
  __device__ static uint32_t apply(uint32_t a, uint32_t b, bool* ambiguous) {
    return arithmeticWord<W, ProdOp>(a, b, ambiguous);
  }
};
template <class W>
struct Fp8WordOp<W, MaxOp> {
  __device__ static uint32_t apply(uint32_t a, uint32_t b, bool*) { return selectWord<W, true>(a, b); }
};
template <class W>
struct Fp8WordOp<W, MinOp> {
  __device__ static uint32_t apply(uint32_t a, uint32_t b, bool*) { return selectWord<W, false>(a, b); }
};

}  // namespace
}  // namespace braid::kernels::cuda
#endif

// Checks of the AVX2 fp8 encoders (kernels/reduce_avx2_ops.h, codec_avx2_ops.h)
// against the scalar NarrowFormat::encode they must equal bit for bit. They are
// compiled into their own object with -mavx2 -mf16c -mfma
// (narrow_avx2_check.cc), so the test binary itself stays portable; only to be
// called when cpuSupportsAvx2().
#pragma once

#include <cstdint>

namespace braid::kernels::avx2check {

enum class Fp8 { kE4m3, kE5m2 };

struct Mismatches {
  uint64_t checked = 0;
  uint64_t count = 0;
  // The first mismatch: input bits (fp32, or bf16 in the low half), block
  // exponent, and the two codes.
  uint32_t bits = 0;
  int k = 0;
  uint32_t got = 0;
  uint32_t want = 0;
};

// encodeNarrow (the reduce kernels' fp8 store) on every fp32 bit pattern in
// [lo, hi), against NarrowFormat::encode.
Mismatches encodeNarrowRange(Fp8 format, uint64_t lo, uint64_t hi);

// The smallest block exponent k the fp8 encoder takes (the largest is 126),
// and the largest it folds into its rounding (its fused path).
int minBlockExponent(Fp8 format);
int maxFusedExponent(Fp8 format);

// The fp8 block encoder with block exponent k forced, on its multiply-first
// path and, for k <= maxFusedExponent, its fused one, against
// NarrowFormat::encode of x * 2^k, over every x that keeps |x * 2^k| within
// the format: for fp32 host values, every binade with mantissas at and next to
// every rounding boundary of every binade below it (a * 2^p + {-1, 0, 1}) plus
// random ones, both signs; for bf16 host values, every code.
Mismatches fp8BlockF32(Fp8 format, int k);
Mismatches fp8BlockBf16(Fp8 format, int k);

}  // namespace braid::kernels::avx2check

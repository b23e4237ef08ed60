// Scalar conversions between fp32 and the 16- and 8-bit float formats. These are
// the reference semantics: the vectorised kernels (reduce.h, and later the
// codecs) match them bit for bit, and tests/unit/kernels checks that.
//
// Formats:
//   fp16  IEEE binary16: 1-5-10, bias 15, inf and NaN.
//   bf16  1-8-7, bias 127 (the top half of an fp32), inf and NaN.
//   e4m3  OCP FP8 E4M3 ("fn"): 1-4-3, bias 7, no inf; S.1111.111 is NaN, so the
//         largest finite value is 448 and S.1111.000-110 are ordinary numbers.
//   e5m2  OCP FP8 E5M2: 1-5-2, bias 15, IEEE-like with inf and NaN (max 57344).
//
// fp32 -> narrow rounds to nearest, ties to even, with the target's subnormals
// (gradual underflow; a value below half the smallest subnormal becomes a signed
// zero). The result does not depend on the FPU rounding mode or on FTZ/DAZ.
//
// Overflow is IEEE-style, never saturating: a value whose rounded magnitude is
// above the largest finite one (e.g. >= 65520 for fp16, > 464 for e4m3) becomes
// inf for fp16, bf16 and e5m2, and NaN for e4m3, which has no inf (the OCP
// spec's non-saturating mode); +-inf inputs likewise become NaN in e4m3.
//
// NaN stays NaN with its sign: narrow -> fp32 returns a quiet NaN carrying the
// payload bits; fp32 -> narrow keeps the top payload bits that fit and sets the
// quiet bit (e4m3 has a single NaN per sign). This is what x86 F16C does, so a
// round trip is the identity on every bit pattern except signalling NaNs, which
// come back quiet.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::kernels {

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);
float e4m3ToFloat(uint8_t v);
uint8_t floatToE4m3(float f);
float e5m2ToFloat(uint8_t v);
uint8_t floatToE5m2(float f);

}  // namespace braid::kernels

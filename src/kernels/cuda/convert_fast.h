// The narrow-format conversions of convert_impl.h through the device's own
// conversion instructions, for the module's kernels.
//
// The software conversions cost some thirty integer operations per element,
// which made every fp16 and fp8 kernel ALU bound (0.2 to 0.45 of a copy on
// an H200). The hardware rounds exactly as they do (IEEE round to nearest
// even, subnormals kept: the module is built without -ftz), so only what the
// instructions define differently is patched here, with a select:
//   - NaN: the hardware returns a canonical NaN; braid keeps the payload bits
//     that fit and the sign (convert_impl.h), so NaN inputs take that formula.
//   - fp8 overflow: the fp8 instructions exist only saturating; braid's e4m3
//     overflows to NaN and its e5m2 to inf, so magnitudes past the rounding
//     limit take the overflow code.
// Every function returns the bits convert_impl.h returns, for every input:
// braid-cuda-bench --verify checks that exhaustively (all 2^32 fp32 inputs,
// all 2^16 and 2^8 codes) on the device it runs on.
//
// fp8 instructions need sm_89; code for older devices keeps the software path.
#pragma once

#if defined(__CUDACC__)
#include <cstdint>

#include "kernels/convert_impl.h"

namespace braid::kernels::cuda {
namespace {  // NOLINT: internal linkage, as convert_impl.h.

constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr uint32_t kF32Inf = 0x7F800000u;
// Magnitudes (as fp32 bits) from which braid's fp8 rounding overflows: above
// 464 (half way from e4m3's 448 to the NaN code; ties go to 448, the even
// one) and from 61440 on (half way from e5m2's 57344 to inf; ties go to inf).
constexpr uint32_t kE4m3OverflowAbove = 0x43E80000u;  // 464.0f
constexpr uint32_t kE5m2OverflowFrom = 0x47700000u;   // 61440.0f

__device__ __forceinline__ float hwHalfToFloat(uint16_t h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ uint16_t hwFloatToHalf(float f) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

// NaN fp16 code -> fp32: quiet, sign and payload kept (HalfFormat::decode).
__device__ __forceinline__ float halfNanToFloat(uint32_t h) {
  return floatOf(((h & 0x8000u) << 16) | 0x7FC00000u | ((h & 0x3FFu) << 13));
}

__device__ __forceinline__ float fastDecodeHalf(uint16_t h) {
  const float hw = hwHalfToFloat(h);
  return (h & 0x7FFFu) > 0x7C00u ? halfNanToFloat(h) : hw;
}

__device__ __forceinline__ uint16_t fastEncodeHalf(float f) {
  const uint32_t x = bitsOf(f);
  const uint16_t hw = hwFloatToHalf(f);
  const uint16_t nan = static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7E00u | ((x >> 13) & 0x3FFu));
  return (x & kF32AbsMask) > kF32Inf ? nan : hw;
}

// e5m2 is the top byte of an fp16 (same exponent, two of its mantissa bits),
// so its decode is the fp16 one.
__device__ __forceinline__ float fastDecodeE5m2(uint8_t v) {
  return fastDecodeHalf(static_cast<uint16_t>(static_cast<uint16_t>(v) << 8));
}

__device__ __forceinline__ float fastDecodeE4m3(uint8_t v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<uint16_t>(v)));
  const float hw = hwHalfToFloat(static_cast<uint16_t>(h2));  // every e4m3 value is an exact fp16
  return (v & 0x7Fu) == 0x7Fu ? floatOf(((v & 0x80u) << 24) | 0x7FC00000u) : hw;
#else
  return E4m3Format::decode(v);
#endif
}

__device__ __forceinline__ uint8_t fastEncodeE4m3(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const uint32_t x = bitsOf(f);
  uint16_t pair;  // the low byte converts the second operand
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  const uint8_t overflow = static_cast<uint8_t>(((x >> 24) & 0x80u) | 0x7Fu);  // NaN, inf and too big
  return (x & kF32AbsMask) > kE4m3OverflowAbove ? overflow : static_cast<uint8_t>(pair);
#else
  return static_cast<uint8_t>(E4m3Format::encode(bitsOf(f)));
#endif
}

__device__ __forceinline__ uint8_t fastEncodeE5m2(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const uint32_t x = bitsOf(f), ax = x & kF32AbsMask, sign = (x >> 24) & 0x80u;
  uint16_t pair;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  const uint32_t overflow = ax > kF32Inf ? (0x7Eu | ((ax >> 21) & 0x3u)) : 0x7Cu;  // NaN or inf
  return static_cast<uint8_t>(ax >= kE5m2OverflowFrom ? (sign | overflow) : pair);
#else
  return static_cast<uint8_t>(E5m2Format::encode(bitsOf(f)));
#endif
}

// Whether any of the eight 16-bit values in four words has an all-ones
// exponent (inf or NaN), for fp16 (kExponent 0x7C00) or bf16 (0x7F80): the
// exponent bits plus their lowest one carry into bit 15 only then. The pair
// conversions' fast paths (codec.cu, reduce.cu) may run only where it is false.
template <uint32_t kExponent>
__device__ __forceinline__ bool anyInfOrNan16(const uint32_t (&w)[4]) {
  constexpr uint32_t kMask = kExponent * 0x10001u, kCarry = (kExponent & (0u - kExponent)) * 0x10001u;
  static_assert(kExponent != 0x7C00u || (kMask == 0x7C007C00u && kCarry == 0x04000400u), "fp16 exponent");
  static_assert(kExponent != 0x7F80u || (kMask == 0x7F807F80u && kCarry == 0x00800080u), "bf16 exponent");
  uint32_t special = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) special |= ((w[k] & kMask) + kCarry) & 0x80008000u;
  return special != 0;
}
constexpr uint32_t kHalfExponent = 0x7C00u, kBf16Exponent = 0x7F80u;

// The fp8 formats as the kernels use them.
struct FastE4m3 {
  __device__ static float decode(uint8_t v) { return fastDecodeE4m3(v); }
  __device__ static uint8_t encode(float f) { return fastEncodeE4m3(f); }
};
struct FastE5m2 {
  __device__ static float decode(uint8_t v) { return fastDecodeE5m2(v); }
  __device__ static uint8_t encode(float f) { return fastEncodeE5m2(f); }
};

}  // namespace
}  // namespace braid::kernels::cuda
#endif

// Element-wise reductions on host memory, for every DataType x RedOp. The
// executor calls these as chunks land, so they are on the hot path of every
// all-reduce: they are vectorised and allocate nothing.
//
// Semantics (identical on every implementation, bit for bit):
//   - Integers: Sum and Prod wrap modulo 2^bits (two's complement, no UB on
//     signed types); Max / Min compare as the signed or unsigned type.
//   - fp32 / fp64: one IEEE operation in the element type. Max / Min propagate
//     NaN (if either input is NaN the result is NaN: a's when a is NaN, else
//     b's) and order -0 below +0, so they are commutative.
//   - fp16, bf16, fp8 e4m3 / e5m2: both inputs are widened to fp32 (exactly),
//     combined as fp32, and rounded back to nearest-even with convert.h's rules:
//     a finite result too large for the format becomes inf (fp16, bf16, e5m2)
//     or NaN (e4m3, which has no inf).
//   - Avg is reduced as Sum; the caller divides once at the end with divideBy().
//   - The sign and payload of a NaN that Sum / Prod / Avg produce are the
//     hardware's, as IEEE 754 leaves them: x86 keeps a NaN operand's and makes
//     inf - inf negative; the GPU kernels (kernels/cuda) give the canonical
//     NaN. The result is a NaN either way; everything else is bit for bit.
//
// Implementations: a portable baseline (auto-vectorised for the build's default
// ISA) and AVX2+F16C+FMA, chosen once at run time from the CPU's features
// (kernels/dispatch.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/types.h"

namespace braid::kernels {

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b exactly (same
// pointer), never partially; a may equal b. type and op must be valid (callers
// check with isValidDataType / isValidRedOp at the boundary); count 0 is a no-op.
// Thread-safe: no shared state besides the one-time CPU detection.
void reduce(void* dst, const void* a, const void* b, size_t count, DataType type, RedOp op);

// data[i] = data[i] / divisor, for Avg. Integer types: division truncating
// toward zero, exact for every value. Floats: fp division in the compute type
// (fp64 for fp64, fp32 for the rest) by divisor converted to that type (exact
// up to 2^24 for fp32, 2^53 for fp64), then for the narrow formats one rounding
// back with convert.h's rules. divisor must be >= 1; 0 leaves data unchanged.
void divideBy(void* data, size_t count, DataType type, uint64_t divisor);

// dst[i] = src[i] * scalar, for PreMulSum: each rank's input multiplied by
// its own scalar before the sum. The scalar is a value of `type`, held in the
// first dataTypeSize(type) bytes of scalarBits (as memcpy puts it there), and
// the product follows Prod's rules above (narrow floats: both widened to fp32,
// multiplied, rounded back once). dst may alias src exactly, never partially.
void scaleBy(void* dst, const void* src, size_t count, DataType type, uint64_t scalarBits);

// Name of the implementation in use: "avx2+f16c" or "baseline". Static string.
const char* implementationName();

}  // namespace braid::kernels

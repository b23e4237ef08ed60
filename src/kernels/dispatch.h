// Internal to src/kernels (and its tests): the per-ISA kernel tables behind
// reduce.h, and the choice among them.
//
// Each implementation is the same source (reduce_impl.h) compiled with its own
// -m flags into its own object file; it exposes one table of function pointers.
// reduce.h's entry points pick a table once, from the CPU's features.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/types.h"

namespace braid::kernels {

using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t count);
using DivideFn = void (*)(void* data, size_t count, uint64_t divisor);
using ScaleFn = void (*)(void* dst, const void* src, size_t count, uint64_t scalarBits);

struct KernelTable {
  const char* name;
  // Indexed by DataType and RedOp; Avg holds the Sum kernel.
  ReduceFn reduce[kNumDataTypes][kNumRedOps];
  // Called with divisor >= 1 only.
  DivideFn divide[kNumDataTypes];
  ScaleFn scale[kNumDataTypes];
};

// The portable baseline, always present.
const KernelTable& baselineKernels();
// The AVX2 + F16C + FMA implementation; nullptr where not compiled in (non-x86
// builds). Only to be called when cpuSupportsAvx2().
//
// There is no AVX-512 table: compiled with 512-bit vectors, the same code was
// no faster at the sizes the executor uses (a few MiB, bound by memory / L2),
// and zmm code can lower the clock of older Xeons for the compute sharing them.
const KernelTable* avx2Kernels();
bool cpuSupportsAvx2();

// The table reduce() uses: the best one this CPU supports, or the baseline
// while forced.
const KernelTable& activeKernels();

// Test hook: while true, reduce(), divideBy() and scaleBy() use the baseline. Not for
// production code paths; safe to flip between calls from one thread.
void forceBaselineForTesting(bool force);

}  // namespace braid::kernels

// reduce.h's entry points and the run-time choice of implementation.
#include <atomic>

#if defined(BRAID_KERNELS_X86)
#include <cpuid.h>
#endif

#include "kernels/dispatch.h"
#include "kernels/reduce.h"

namespace braid::kernels {

#if defined(BRAID_KERNELS_X86)
// __builtin_cpu_supports also checks that the OS saves the vector state (XCR0).
// clang 14 does not know "f16c" there, so that bit comes from cpuid directly.
bool cpuSupportsAvx2() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  return f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
bool cpuSupportsAvx2() { return false; }
const KernelTable* avx2Kernels() { return nullptr; }
#endif

namespace {

std::atomic<bool> gForceBaseline{false};

const KernelTable& bestKernels() {
  // Chosen once; function-local static init is thread-safe.
  static const KernelTable* const kBest = [] {
    if (cpuSupportsAvx2() && avx2Kernels() != nullptr) return avx2Kernels();
    return &baselineKernels();
  }();
  return *kBest;
}

}  // namespace

const KernelTable& activeKernels() {
  if (gForceBaseline.load(std::memory_order_relaxed)) return baselineKernels();
  return bestKernels();
}

void forceBaselineForTesting(bool force) { gForceBaseline.store(force, std::memory_order_relaxed); }

void reduce(void* dst, const void* a, const void* b, size_t count, DataType type, RedOp op) {
  if (count == 0) return;
  activeKernels().reduce[static_cast<int>(type)][static_cast<int>(op)](dst, a, b, count);
}

void divideBy(void* data, size_t count, DataType type, uint64_t divisor) {
  if (count == 0 || divisor == 0) return;
  activeKernels().divide[static_cast<int>(type)](data, count, divisor);
}

void scaleBy(void* dst, const void* src, size_t count, DataType type, uint64_t scalarBits) {
  if (count == 0) return;
  activeKernels().scale[static_cast<int>(type)](dst, src, count, scalarBits);
}

const char* implementationName() { return activeKernels().name; }

}  // namespace braid::kernels

// reduce_impl.h compiled with -mavx2 -mf16c -mfma (see CMakeLists.txt). Only
// called after cpuSupportsAvx2() said yes.
#if !defined(__AVX2__) || !defined(__F16C__) || !defined(__FMA__)
#error "reduce_avx2.cc must be compiled with -mavx2 -mf16c -mfma"
#endif

#include "kernels/reduce_impl.h"

namespace braid::kernels {

const KernelTable* avx2Kernels() {
  static constexpr KernelTable kTable = makeKernelTable("avx2+f16c");
  return &kTable;
}

}  // namespace braid::kernels

// The portable implementation: reduce_impl.h under the build's default flags
// (SSE2 on x86-64), auto-vectorised where the compiler can.
#include "kernels/reduce_impl.h"

namespace braid::kernels {

const KernelTable& baselineKernels() {
  static constexpr KernelTable kTable = makeKernelTable("baseline");
  return kTable;
}

}  // namespace braid::kernels

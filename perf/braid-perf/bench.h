// Measuring one row cell: warm-up, timed iterations and the check of one
// collective at one size, out of place or in place, on every rank at once.
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <string>

#include "collectives.h"
#include "memory.h"
#include "options.h"
#include "report.h"
#include "values.h"

namespace braid::perf {

struct RankContext {
  braidComm_t comm = nullptr;
  braidStream_t stream = nullptr;  // nullptr: blocking calls
  void* cudaStream = nullptr;      // --cuda-stream: the cudaStream_t stream wraps
  int rank = 0;
  int nranks = 1;
};

// Returns the cell as rank 0 prints it: the combined time (opts.timeReduce),
// the bandwidths and #wrong summed over ranks. A braid call that fails ends
// the process (see fatal). An in-place call that answers braidNotSupported
// gives a skipped cell: the library validates the arguments identically on
// every rank, so all ranks skip together.
Result runCell(const RankContext& ctx, const PerfOptions& opts, const Layout& layout, const ValuePlan& plan,
               bool inPlace, Buffers& buffers);

// Prints "braid-perf: rank R: <what> failed [<result name>]: <last error>",
// aborts the communicator (so the peers fail fast instead of waiting) and
// exits 1.
[[noreturn]] void fatal(const RankContext& ctx, const char* what, braidResult_t rc);

// The same for a failure outside braid (a CUDA call): "braid-perf: rank R:
// <message>" (without the rank before the communicator exists), abort, exit 1.
[[noreturn]] void fatalMessage(const RankContext& ctx, const std::string& message);

}  // namespace braid::perf

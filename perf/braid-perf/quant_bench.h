// braid-perf -q: one cell (a size, out of place or in place) of a quantized
// all-to-all or all-gather: timed like runCell, then checked for error
// against the unquantized inputs (quant_error.h) instead of #wrong.
#pragma once

#include "bench.h"
#include "quant_error.h"

namespace braid::perf {

struct QuantResult {
  Result timing;
  QuantError error;  // merged over all ranks
};

QuantResult runQuantCell(const RankContext& ctx, const PerfOptions& opts, const Layout& layout, braidDataType_t type,
                         bool inPlace, Buffers& buffers);

}  // namespace braid::perf

// PreMulSum: the sum over ranks of scalar_r * input_r, each rank with its own
// scalar (NCCL's ncclRedOpCreatePreMulSum; frameworks use it to scale
// gradients, e.g. by 1 / world size, inside the all-reduce).
//
// Every sum algorithm becomes a PreMulSum one with local steps in front:
// this rank's input, times its scalar, is written where the sum's schedule
// then reads its input from, in pieces of a chunk or more, and each step of
// that schedule waits for the pieces it touches (so the first sends leave
// while the rest is scaled).
//   - all-reduce scales into its output and runs there in place (every
//     all-reduce schedule is correct in place): no scratch;
//   - reduce and reduce-scatter scale into a scratch of the input's size (a
//     non-root's reduce output may be null; a reduce-scatter's is one block).
// NCCL folds the multiply into its first reduction instead. Here it costs one
// more pass over the input, overlapped with the wire, and keeps every
// algorithm, the simulator and the tuner unaware of PreMulSum.
#pragma once

#include "algorithms/registry.h"
#include "algorithms/schedule.h"
#include "base/status.h"

namespace braid::algo {

// Builds `inner` (a sum algorithm for args.collective) for args with
// args.preMultiply set, and puts the scaling in front. InvalidArgument for a
// collective that does not reduce.
Status buildPreMultiplied(const Algorithm& inner, const CollectiveArgs& args, Schedule* out);

}  // namespace braid::algo

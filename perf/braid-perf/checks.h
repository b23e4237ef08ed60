// Preparing a rank's buffers before a call and counting the wrong elements
// after it. Pure (no braid calls), so the unit tests can play every rank of a
// collective in one process.
#pragma once

#include <cstdint>

#include "collectives.h"
#include "values.h"

namespace braid::perf {

struct CallBuffers {
  const void* send;
  void* recv;
};

// Writes rank's inputs and poisons everything the call should overwrite.
// Out of place, send and recv are two buffers of l.sendCount and l.recvCount
// elements; in place, recv is the one buffer (max of both counts) and send is
// ignored. Returns the pointers to pass to the call.
CallBuffers prepareBuffers(const Collective& c, const ValuePlan& plan, const Layout& l, int rank, int root,
                           bool inPlace, void* send, void* recv);

// The number of elements of the received region (l.recvCount elements at
// result) that differ from what c must produce on rank.
int64_t countWrong(const Collective& c, const ValuePlan& plan, const Layout& l, int rank, int root,
                   const void* result);

}  // namespace braid::perf

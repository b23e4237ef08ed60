// Schedule simulator: runs the schedules of all ranks of one collective in one
// process, moving real bytes through in-memory FIFOs, one per ordered pair of
// ranks. It checks an algorithm with no network at all: matching (every receive
// meets a send of the same size, in order), dependencies (a deadlock is
// reported, not hung on) and the data itself (the caller compares outputs with
// a reference). The cost model of the tuner will extend it with time.
#pragma once

#include <vector>

#include "algorithms/schedule.h"
#include "base/status.h"

namespace braid::algo {

struct SimRank {
  const Schedule* schedule = nullptr;
  std::vector<void*> buffers;  // caller buffers by id (kInput, kOutput, ...)
};

// Runs until every step of every rank is done. InternalError describing the
// first mismatch or the stuck steps otherwise.
Status simulate(std::vector<SimRank>& ranks);

struct SimOptions {
  // 0: a fixed order. Otherwise the next step to run is drawn (from this seed)
  // among all steps of all ranks that could run now, as a real executor might
  // order them: a missing dependency shows up as wrong data under some seed.
  uint64_t seed = 0;
};
Status simulate(std::vector<SimRank>& ranks, const SimOptions& options);

}  // namespace braid::algo

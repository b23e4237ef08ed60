// Predictions for the tuner: every registered algorithm of a collective,
// through its closed form (algorithms/tuner/closed_forms.h) or, for an
// algorithm without one, through the discrete-event cost model when that is
// cheap enough to run on the call path (small N, bounded step count). An
// algorithm neither can predict is left out, never guessed.
#pragma once

#include <vector>

#include "algorithms/registry.h"
#include "algorithms/tuner/closed_forms.h"

namespace braid::algo {

// The chunk sizes the tuner chooses from (pipelined algorithms only).
inline constexpr size_t kChunkChoices[] = {32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20};

// Discrete-event fallback limits: at most this many ranks and this many steps
// over all ranks (tens of milliseconds), at one chunk size (unless fixed).
inline constexpr int kSimulateMaxRanks = 64;
inline constexpr size_t kSimulateMaxSteps = 100000;
inline constexpr size_t kSimulateChunk = 128 << 10;
inline constexpr double kSimulateMaxChunks = 1024;  // buffer bytes / chunk of one rank

struct Candidate {
  const Algorithm* algorithm = nullptr;
  size_t chunkBytes = 0;  // the best of kChunkChoices (or the fixed one)
  double seconds = 0;
  bool closedForm = false;  // else simulated
};

// One algorithm at its best chunk (only `fixedChunk` when nonzero). False when
// it cannot be predicted for q.
bool predictAlgorithm(const Algorithm& a, const ModelQuery& q, const CostParams& p, size_t fixedChunk,
                      Candidate* out);

// Every predictable registered algorithm of q.collective, fastest first (ties:
// by name, so that every rank orders them alike).
std::vector<Candidate> predictAll(const ModelQuery& q, const CostParams& p, size_t fixedChunk);

}  // namespace braid::algo

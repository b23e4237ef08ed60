// Tuner: picks the algorithm (and pipeline chunk) of every collective call
// from the cost model, per communicator.
//
// For a call of `bytes` it returns, in order: the BRAID_ALGO override covering
// that size (with the model's best chunk for it); else the model's fastest
// algorithm at the size bucket (bytes rounded up to a power of two, so that a
// pick never depends on which size of a bucket came first); else, when the
// model is off or cannot predict any algorithm, the registry's fallback table.
// Picks are cached per (collective, bucket, override), and each new one is
// logged once at BRAID_DEBUG=INFO with its predicted time.
//
// Determinism: every rank must make the same pick for the same call, so the
// config (nranks, parameters, fixed chunk) must be identical on all ranks.
// Thread-safe: pick() may be called from streams and the caller's thread.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/tuner/link_params.h"
#include "algorithms/tuner/predict.h"

namespace braid::algo {

struct TunerConfig {
  int nranks = 1;
  CostParams params;
  bool modelEnabled = true;  // false: the fallback table decides
  size_t fixedChunkBytes = 0;  // nonzero: never tune the chunk (BRAID_CHUNK_BYTES set)
  size_t fallbackChunkBytes = 128 * 1024;  // with the fallback table

  // From the environment's link settings; ranksPerHost as the topology says,
  // sharedMemory: whether ranks of a host talk over shared memory.
  static TunerConfig make(int nranks, int ranksPerHost, const LinkSettings& link, size_t fixedChunkBytes,
                          size_t fallbackChunkBytes, bool sharedMemory = true);
};

struct Pick {
  const Algorithm* algorithm = nullptr;  // nullptr: nothing registered for the collective
  size_t chunkBytes = 0;
  double seconds = -1;  // predicted; negative when the model was not used
  const char* reason = "";  // "override", "model" or "fallback"
};

class Tuner {
 public:
  explicit Tuner(const TunerConfig& config) : config_(config) {}

  Pick pick(Collective c, size_t bytes, const AlgorithmOverrides& overrides);
  const TunerConfig& config() const { return config_; }
  size_t cachedPicks() const;

  // The size bucket of `bytes` and the size the model evaluates for it.
  static int bucketOf(size_t bytes);
  static size_t bucketBytes(int bucket);

 private:
  Pick decide(Collective c, size_t bytes, const Algorithm* forced) const;

  const TunerConfig config_;
  mutable std::mutex mu_;
  std::map<std::tuple<int, int, const Algorithm*>, Pick> cache_;  // guarded by mu_
};

// A table of predicted times (microseconds) of every predictable algorithm of
// `c`, one row per (ranks, size), with the pick marked; for braid-info and tests.
std::string predictionTable(Collective c, const std::vector<int>& nranks, const std::vector<size_t>& sizes,
                            const CostParams& params);

}  // namespace braid::algo

// Algorithms register with one declaration each:
//   BRAID_REGISTER_ALGORITHM(allreduce_ring, Collective::kAllReduce, "ring", buildRingAllReduce);
// and one is picked per call: a user override from BRAID_ALGO, else the
// cost-model tuner (algorithms/tuner/tuner.h), else the fixed fallback table
// here when the model has no parameters.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/schedule.h"
#include "base/status.h"

namespace braid::algo {

using Builder = Status (*)(const CollectiveArgs& args, Schedule* out);

struct Algorithm {
  Collective collective;
  const char* name;
  Builder build;
  // Ranked by the tuner only when some host has several ranks (the
  // hierarchical all-reduce): with one rank a host it is its leaders' flat
  // algorithm under another name. Predicted by its closed form alone, which
  // reads the hosts; the simulator's fallback does not pass them.
  bool sharedHostsOnly = false;
  // Ranked by the tuner only for calls of at most this many bytes (0: any
  // size): a latency algorithm whose cost at larger sizes the model does not
  // see (BRAID_ALGO may still force it).
  size_t largestBytes = 0;
};

// Gather / scatter blocks (bytes a rank) up to which the binomial tree is
// ranked, and the fallback table takes it. Beyond, each block's extra hops
// cost memory bandwidth the model does not count, and the linear algorithm's
// concurrent transfers win: measured on this VM, 4 ranks, 1 MiB a rank, 20
// calls, medians of 5: over shm gather 647 us linear against 714 binomial,
// scatter 405 against 712; over tcp within 5% either way.
constexpr size_t kRootedTreeBytes = 8 * 1024;

void registerAlgorithm(const Algorithm& algorithm);
// Every registered algorithm, grouped by collective (for braid-info and tests).
std::vector<Algorithm> registeredAlgorithms();
const Algorithm* findAlgorithm(Collective collective, const std::string& name);

// Per-collective overrides parsed from a BRAID_ALGO string, in the spirit of
// NCCL_ALGO / UCC_TL_*_TUNE:
//   allreduce:rhd;allgather:ring            one algorithm for every size
//   allreduce:0-64k:rd,64k-inf:ring         by size, [lo, hi) in bytes as
//                                           buildCollective counts them
// Sizes take k, m, g suffixes (powers of 1024) and "inf"; within a collective
// the first matching range wins (entries for the same collective append), and
// a size no range covers is left to the tuner. "alltoall" steers alltoallv too.
// An unknown collective or algorithm, or a malformed range, is an
// InvalidArgument naming it (and listing the known algorithms): better a clear
// error at init than a silent fallback.
class AlgorithmOverrides {
 public:
  struct Rule {
    size_t lo = 0, hi = SIZE_MAX;  // bytes, [lo, hi)
    const Algorithm* algorithm = nullptr;
  };
  static Status parse(const std::string& spec, AlgorithmOverrides* out);
  // The algorithm forced for a call of `bytes`, or nullptr (the tuner decides).
  const Algorithm* forced(Collective c, size_t bytes) const;
  // The algorithm forced for every size (a rule [0, inf) that nothing precedes), or nullptr.
  const Algorithm* forced(Collective c) const;
  const std::vector<Rule>& rules(Collective c) const { return rules_[static_cast<int>(c)]; }
  bool empty() const;

 private:
  std::vector<Rule> rules_[kNumCollectives];
};

// "0-64k" style size: digits with an optional k/m/g suffix (case-insensitive,
// powers of 1024), or "inf" (SIZE_MAX). False on anything else or overflow.
bool parseSize(const std::string& text, size_t* out);

// The fixed table used when the cost model has no parameters: rd for small
// all-reduces, rhd for large ones on powers of two, ring otherwise; chain,
// pairwise and dissemination for the rest. nullptr when none is registered.
const Algorithm* fallbackAlgorithm(Collective collective, size_t bytes, int nranks);

// The override for this size if any, else the fallback table (no cost model:
// for callers without a communicator; the communicator asks its Tuner).
const Algorithm* selectAlgorithm(Collective collective, size_t bytes, int nranks,
                                 const AlgorithmOverrides& overrides);

struct AlgorithmRegistrar {
  explicit AlgorithmRegistrar(const Algorithm& a) { registerAlgorithm(a); }
};

}  // namespace braid::algo

#define BRAID_REGISTER_ALGORITHM(ident, collective, name, builder) \
  static ::braid::algo::AlgorithmRegistrar braid_algorithm_registrar_##ident({collective, name, builder})
#define BRAID_REGISTER_SHARED_HOSTS_ALGORITHM(ident, collective, name, builder) \
  static ::braid::algo::AlgorithmRegistrar braid_algorithm_registrar_##ident(   \
      {collective, name, builder, true})
#define BRAID_REGISTER_SMALL_ALGORITHM(ident, collective, name, builder, largestBytes) \
  static ::braid::algo::AlgorithmRegistrar braid_algorithm_registrar_##ident(          \
      {collective, name, builder, false, largestBytes})

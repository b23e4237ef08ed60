// Algorithms register with one declaration each:
//   BRAID_REGISTER_ALGORITHM(allreduce_ring, Collective::kAllReduce, "ring", buildRingAllReduce);
// and the selector picks one per call: a user override from BRAID_ALGO
// ("allreduce:ring;broadcast:chain"), else the collective's default (the tuner
// of the algorithms issue replaces the default with a cost model).
#pragma once

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
};

void registerAlgorithm(const Algorithm& algorithm);
// Every registered algorithm, grouped by collective (for braid-info and tests).
std::vector<Algorithm> registeredAlgorithms();
const Algorithm* findAlgorithm(Collective collective, const std::string& name);

// Per-collective overrides parsed from a BRAID_ALGO string. An unknown
// collective or algorithm is an InvalidArgument naming it and listing the known
// ones: better a clear error at init than a silent fallback.
class AlgorithmOverrides {
 public:
  static Status parse(const std::string& spec, AlgorithmOverrides* out);
  // The forced algorithm for this collective, or nullptr.
  const Algorithm* forced(Collective c) const { return forced_[static_cast<int>(c)]; }

 private:
  const Algorithm* forced_[kNumCollectives] = {};
};

// The algorithm to run: the override if any, else the default for the
// collective at this size (bytes of the vector / per-rank block). The defaults
// are a fixed table until the cost-model tuner replaces them.
const Algorithm* selectAlgorithm(Collective collective, size_t bytes, int nranks,
                                 const AlgorithmOverrides& overrides);

struct AlgorithmRegistrar {
  explicit AlgorithmRegistrar(const Algorithm& a) { registerAlgorithm(a); }
};

}  // namespace braid::algo

#define BRAID_REGISTER_ALGORITHM(ident, collective, name, builder) \
  static ::braid::algo::AlgorithmRegistrar braid_algorithm_registrar_##ident({collective, name, builder})

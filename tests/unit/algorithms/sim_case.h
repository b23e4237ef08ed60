// One simulated collective: every rank's schedule built by one registered
// algorithm, run together in the schedule simulator, each rank's output
// compared element by element with a reference computed here. Shared by the
// simulator test files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/registry.h"

namespace braid::algo::test {

struct SimCase {
  const Algorithm* algorithm = nullptr;
  int n = 1;
  size_t count = 0;
  RedOp op = RedOp::kSum;
  int root = 0;
  bool inPlace = false;
  uint64_t seed = 0;         // SimOptions::seed: 0 fixed order, else random among eligible steps
  size_t chunkBytes = 16;    // small: many chunks even for small counts
  std::vector<int> hostOf;   // CollectiveArgs::hostOf (hierarchical algorithms); empty: one host per rank
  // PreMulSum (op must be kSum): rank r's input is multiplied by preMulScalar(r)
  // first, the schedule built by algorithms/premul around the algorithm.
  bool preMultiply = false;
};

// Rank r's PreMulSum scalar in simulated cases: -2, -1, 0, 1, 2, -2, ...
int32_t preMulScalar(int rank);

std::string describe(const SimCase& c);

bool reduces(Collective c);
bool rooted(Collective c);
// Collectives whose buffers hold N blocks of `count` (memory grows as N * count).
bool blockwise(Collective c);

// Builds, validates and simulates the case and checks every output element;
// failures are reported with gtest (use ASSERT_NO_FATAL_FAILURE / HasFatalFailure).
void runSimCase(const SimCase& c);

}  // namespace braid::algo::test

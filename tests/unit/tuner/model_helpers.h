// Shared by the tuner tests: fabric parameters and a discrete-event prediction
// of a registered algorithm for every rank at once.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "algorithms/registry.h"
#include "algorithms/sim/cost_model.h"
#include "algorithms/tuner/closed_forms.h"

namespace braid::algo::testing {

// 100 Gbit/s, 5 us links; reductions at 10 GB/s.
inline CostParams fabric(int ranksPerHost = 1) {
  CostParams p;
  p.inter = {5e-6, 1.0 / 12.5e9};
  p.intra = {1e-6, 1.0 / 40e9};
  p.gamma = 1.0 / 10e9;
  p.ranksPerHost = ranksPerHost;
  return p;
}

inline Prediction simulateAlgorithm(Collective c, const char* name, const ModelQuery& q,
                                    const CostParams& p) {
  const Algorithm* a = findAlgorithm(c, name);
  EXPECT_NE(a, nullptr) << name;
  Prediction out;
  if (a == nullptr) return out;
  // Hosts in blocks of ranksPerHost, as the cost model places them (only the
  // hierarchical algorithms read it).
  std::vector<int> hostOf;
  for (int r = 0; r < q.nranks; ++r) hostOf.push_back(r / p.ranksPerHost);
  Status st = predictTime(
      q.nranks,
      [&](int rank, Schedule* s) {
        CollectiveArgs args;
        args.collective = c;
        args.nranks = q.nranks;
        args.rank = rank;
        args.count = q.bytes / q.elemSize;
        args.dtype = q.elemSize == 4 ? DataType::kFloat32 : DataType::kUint8;
        args.chunkBytes = q.chunkBytes;
        args.hostOf = hostOf;
        return a->build(args, s);
      },
      p, &out);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out;
}

}  // namespace braid::algo::testing

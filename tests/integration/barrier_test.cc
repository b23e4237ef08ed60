// Barrier semantics, observed through a counter in memory shared by the rank
// processes: every rank increments it before entering barrier k, so once any
// rank leaves barrier k it must read at least n*(k+1); and as no rank can pass
// barrier k+1 without this one, at most n*(k+2).
#include <gtest/gtest.h>

#include <atomic>

#include "harness.h"

namespace braid::itest {
namespace {

class Barrier : public ::testing::TestWithParam<int> {};

TEST_P(Barrier, NobodyLeavesEarly) {
  const int n = GetParam();
  RunOptions o;
  o.nranks = n;
  o.sharedBytes = 64;
  o.limitSeconds = 30;
  runRanks(o, [n](RankContext& ctx) {
    auto* counter = static_cast<std::atomic<int>*>(ctx.shared);
    for (int k = 0; k < 200; ++k) {
      counter->fetch_add(1);
      braidResult_t r = braidBarrier(ctx.comm, nullptr);
      ASSERT_EQ(r, braidSuccess) << "barrier " << k << ": " << braidGetLastError(ctx.comm);
      const int seen = counter->load();
      ASSERT_GE(seen, n * (k + 1)) << "rank " << ctx.rank << " left barrier " << k << " early";
      ASSERT_LE(seen, n * (k + 2)) << "rank " << ctx.rank << " after barrier " << k;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Barrier, ::testing::Values(2, 3, 4, 5, 6, 7, 8),
                         [](const ::testing::TestParamInfo<int>& p) {
                           std::string name = std::to_string(p.param);
                           return name.insert(0, 1, 'N');
                         });

}  // namespace
}  // namespace braid::itest

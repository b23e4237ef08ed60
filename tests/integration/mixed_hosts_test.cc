// The core correctness matrix on ranks split into pretend hosts with
// BRAID_HOSTID, as a real cluster has them: every pair on one host talks over
// shared memory, every pair across hosts over TCP, within one communicator and
// often within one schedule. Hosts alternate (rank r on host r % 2), so ring
// neighbours cross hosts while the tree and halving-doubling partners mix.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>

#include "harness.h"
#include "matrix.h"

namespace braid::itest {
namespace {

void runMixed(int n, const MatrixOptions& m) {
  RunOptions o;
  o.nranks = n;
  o.init = false;
  o.sharedBytes = 64;
  o.limitSeconds = 120;
  runRanks(o, [n, &m](RankContext& ctx) {
    std::string host = "mixed-host-";
    setenv("BRAID_HOSTID", host.append(std::to_string(ctx.rank % 2)).c_str(), 1);
    unsetenv("BRAID_TRANSPORT");
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = 30000;
    ASSERT_EQ(braidCommInitRankConfig(&ctx.comm, ctx.nranks, ctx.id, ctx.rank, &cfg), braidSuccess)
        << braidGetLastError(nullptr);
    runInline(buildMatrix(n, m), ctx.comm, ctx.rank, n, ctx.shared);
  });
}

class MixedHosts : public ::testing::TestWithParam<int> {};

// Counts 0, 1, 7 and 4099 for every dtype x op x collective, in and out of place.
TEST_P(MixedHosts, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  runMixed(GetParam(), m);
}

// The large count (pipelined through many chunks) for a representative subset.
TEST_P(MixedHosts, Big) {
  MatrixOptions m;
  m.counts = {};
  runMixed(GetParam(), m);
}

INSTANTIATE_TEST_SUITE_P(Ranks, MixedHosts, ::testing::Values(2, 3, 4, 5, 8),
                         [](const ::testing::TestParamInfo<int>& p) {
                           std::string name = std::to_string(p.param);
                           return name.insert(0, 1, 'N');
                         });

}  // namespace
}  // namespace braid::itest

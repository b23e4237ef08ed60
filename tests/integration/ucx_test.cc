// The core correctness matrix over the UCX transport: every pair forced onto
// it (BRAID_TRANSPORT=ucx), and as a cluster would use it, between pretend
// hosts (BRAID_NET=ucx) while ranks of one host keep shared memory. UCX here
// runs over TCP (the only fabric this machine has); the code path is the one
// InfiniBand and RoCE take, UCX choosing the wire underneath.
//
// Skips, saying so, where libucp cannot be loaded.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness.h"
#include "matrix.h"

namespace braid::itest {
namespace {

// `hosts` 0: every pair over ucx. Else rank r on pretend host r % hosts.
void runOverUcx(int n, int hosts, const MatrixOptions& m) {
  RunOptions o;
  o.nranks = n;
  o.init = false;
  o.sharedBytes = 64;
  o.limitSeconds = 150;
  runRanks(o, [n, hosts, &m](RankContext& ctx) {
    if (hosts == 0) {
      setenv("BRAID_TRANSPORT", "ucx", 1);
    } else {
      unsetenv("BRAID_TRANSPORT");
      setenv("BRAID_NET", "ucx", 1);
      std::string host = "ucx-host-";
      setenv("BRAID_HOSTID", host.append(std::to_string(ctx.rank % hosts)).c_str(), 1);
    }
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = 60000;
    ASSERT_EQ(braidCommInitRankConfig(&ctx.comm, ctx.nranks, ctx.id, ctx.rank, &cfg), braidSuccess)
        << braidGetLastError(nullptr);
    runInline(buildMatrix(n, m), ctx.comm, ctx.rank, n, ctx.shared);
  });
}

struct Shape {
  int ranks;
  int hosts;
};

class Ucx : public ::testing::TestWithParam<Shape> {
 protected:
  void SetUp() override {
    if (std::string why = ucxMissing(); !why.empty()) GTEST_SKIP() << why;
  }
};

// Counts 0, 1, 7 and 4099 for every dtype x op x collective, in and out of place.
TEST_P(Ucx, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  runOverUcx(GetParam().ranks, GetParam().hosts, m);
}

// The large count (rendezvous, many chunks) for the representative subset.
TEST_P(Ucx, Big) {
  MatrixOptions m;
  m.counts = {};
  runOverUcx(GetParam().ranks, GetParam().hosts, m);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Ucx, ::testing::Values(Shape{2, 0}, Shape{3, 0}, Shape{3, 2}, Shape{4, 2}),
                         [](const ::testing::TestParamInfo<Shape>& p) {
                           // Built with append: GCC 12's -Wrestrict trips on "N" + ...
                           std::string name = std::to_string(p.param.ranks);
                           name.insert(0, 1, 'N');
                           if (p.param.hosts == 0) return name.append("_all_ucx");
                           return name.append("_").append(std::to_string(p.param.hosts)).append("hosts");
                         });

}  // namespace
}  // namespace braid::itest

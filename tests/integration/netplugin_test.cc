// The core correctness matrix through an NCCL net plugin (the netplugin
// transport): braid's own plugin, libnccl-net-braid.so, which runs over tcp
// on lo. Every pair on it (BRAID_TRANSPORT=netplugin), and between pretend
// hosts (BRAID_NET=netplugin) while ranks of one host keep shared memory.
// The same path carries braid over a vendor's plugin (EFA, InfiniBand), with
// BRAID_NET_PLUGIN naming that one.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness.h"
#include "matrix.h"

namespace braid::itest {
namespace {

// `hosts` 0: every pair through the plugin. Else rank r on pretend host r % hosts.
void runOverPlugin(int n, int hosts, const MatrixOptions& m) {
  RunOptions o;
  o.nranks = n;
  o.init = false;
  o.sharedBytes = 64;
  o.limitSeconds = 150;
  runRanks(o, [n, hosts, &m](RankContext& ctx) {
    setenv("BRAID_NET_PLUGIN", BRAID_NCCL_NET_PLUGIN_PATH, 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
    if (hosts == 0) {
      setenv("BRAID_TRANSPORT", "netplugin", 1);
    } else {
      unsetenv("BRAID_TRANSPORT");
      setenv("BRAID_NET", "netplugin", 1);
      std::string host = "plugin-host-";
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

class NetPlugin : public ::testing::TestWithParam<Shape> {};

// Counts 0, 1, 7 and 4099 for every dtype x op x collective, in and out of place.
TEST_P(NetPlugin, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  runOverPlugin(GetParam().ranks, GetParam().hosts, m);
}

// The large count (many chunks) for the representative subset.
TEST_P(NetPlugin, Big) {
  MatrixOptions m;
  m.counts = {};
  runOverPlugin(GetParam().ranks, GetParam().hosts, m);
}

INSTANTIATE_TEST_SUITE_P(Shapes, NetPlugin, ::testing::Values(Shape{3, 0}, Shape{4, 2}),
                         [](const ::testing::TestParamInfo<Shape>& p) {
                           std::string name = std::to_string(p.param.ranks);
                           name.insert(0, 1, 'N');
                           if (p.param.hosts == 0) return name.append("_all_netplugin");
                           return name.append("_").append(std::to_string(p.param.hosts)).append("hosts");
                         });

}  // namespace
}  // namespace braid::itest

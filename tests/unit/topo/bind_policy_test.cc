// Which CPUs BRAID_BIND picks for a rank's engine thread, on described
// machines: 2 hosts x 4 ranks of the DGX-like box (2 NUMA nodes, 4 RDMA NICs
// and an Ethernet port), and one host alone.
#include <gtest/gtest.h>

#include "test_util.h"
#include "topo/bind_policy.h"

namespace braid::topo {
namespace {

using testing::dgx;

CommTopology cluster(int hosts, int perHost) {
  HostTopology h = dgx();
  std::vector<RankView> views;
  for (int r = 0; r < hosts * perHost; ++r) {
    RankView v;
    v.rank = r;
    v.hostId = "node" + std::to_string(r / perHost) + ":boot";
    v.hostname = "node" + std::to_string(r / perHost);
    v.numa = (r % perHost) * 2 / perHost;  // first half on node 0, second on node 1
    v.numaCount = 2;
    v.nics = h.nics;
    views.push_back(v);
  }
  CommTopology c;
  EXPECT_TRUE(mergeRankViews(views, &c).isOk());
  return c;
}

TEST(BindPolicy, RanksWithRemotePeersSitNearAnRdmaNicOnTheirNumaNode) {
  const CommTopology c = cluster(2, 4);
  for (int r = 0; r < 8; ++r) {
    BindTarget t = chooseBindTarget(c, r, "");
    ASSERT_EQ(t.kind, BindTarget::Kind::kNic) << t.why;
    EXPECT_EQ(t.nic.rfind("mlx5_", 0), 0u) << t.nic;
    // The NIC chosen is on the rank's NUMA node.
    for (const Nic& n : c.hosts[c.hostOf[r]].nics)
      if (n.name == t.nic && n.numa >= 0) {
        EXPECT_EQ(n.numa, c.ranks[r].numa) << "rank " << r << " " << t.nic;
      }
  }
}

TEST(BindPolicy, TheDescribedNicsHaveNumaNodes) {
  // Otherwise the NUMA check above would hold vacuously.
  // The topology is a named object: a range-for over a member of the temporary
  // cluster(1, 2) would read it after it is destroyed.
  const CommTopology c = cluster(1, 2);
  int known = 0;
  for (const Nic& n : c.hosts[0].nics) known += n.numa >= 0;
  EXPECT_GE(known, 4);
}

TEST(BindPolicy, SocketIfnameWins) {
  const CommTopology c = cluster(2, 4);
  EXPECT_EQ(chooseBindTarget(c, 1, "eth").nic, "eth0");
  EXPECT_EQ(chooseBindTarget(c, 1, "=eth0").nic, "eth0");
  EXPECT_NE(chooseBindTarget(c, 1, "^eth").nic, "eth0");  // an exclusion is no preference
}

TEST(BindPolicy, OneHostBindsToTheRanksNumaNode) {
  const CommTopology c = cluster(1, 4);
  BindTarget t = chooseBindTarget(c, 3, "");
  EXPECT_EQ(t.kind, BindTarget::Kind::kNuma) << t.why;
  EXPECT_EQ(t.numa, 1);
}

TEST(BindPolicy, UnknownNumaAndNoNicLeavesTheThreadAlone) {
  CommTopology c = cluster(1, 2);
  c.ranks[0].numa = -1;
  EXPECT_EQ(chooseBindTarget(c, 0, "").kind, BindTarget::Kind::kNone);
  EXPECT_EQ(chooseBindTarget(c, 7, "").kind, BindTarget::Kind::kNone);  // out of range
}

}  // namespace
}  // namespace braid::topo

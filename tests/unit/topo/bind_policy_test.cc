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

// Ranks of hosts with these CPU sets ("" : not known), host by host.
CommTopology withCpus(const std::vector<std::vector<std::string>>& hosts) {
  std::vector<RankView> views;
  for (size_t h = 0; h < hosts.size(); ++h)
    for (const std::string& cpus : hosts[h]) {
      RankView v;
      v.rank = static_cast<int>(views.size());
      v.hostId = "node" + std::to_string(h) + ":boot";
      v.hostname = "node" + std::to_string(h);
      EXPECT_TRUE(CpuList::parse(cpus, &v.cpus).isOk()) << cpus;
      views.push_back(v);
    }
  CommTopology c;
  EXPECT_TRUE(mergeRankViews(views, &c).isOk());
  return c;
}

std::string share(const CommTopology& c, int rank) {
  std::string why;
  const CpuList s = engineCpuShare(c, rank, &why);
  EXPECT_FALSE(why.empty());
  return s.empty() ? "none" : s.toString();
}

TEST(EngineCpuShare, RanksOnOneSetOfCpusSplitItEvenly) {
  const CommTopology two = withCpus({{"0-1", "0-1"}});
  EXPECT_EQ(share(two, 0), "0");
  EXPECT_EQ(share(two, 1), "1");
  const CommTopology three = withCpus({{"0-7", "0-7", "0-7"}});
  EXPECT_EQ(share(three, 0), "0-1");
  EXPECT_EQ(share(three, 1), "2-4");
  EXPECT_EQ(share(three, 2), "5-7");
  // Hosts split their own CPUs: rank 3 is the first of its host's two.
  const CommTopology hosts = withCpus({{"0-3", "0-3"}, {"0-3", "0-3"}});
  EXPECT_EQ(share(hosts, 2), "0-1");
  EXPECT_EQ(share(hosts, 3), "2-3");
}

TEST(EngineCpuShare, GroupsOfRanksOnTheirOwnCpusSplitThose) {
  // Two NUMA halves, two ranks pinned to each (numactl): each pair splits its half.
  const CommTopology c = withCpus({{"0-3", "4-7", "0-3", "4-7"}});
  EXPECT_EQ(share(c, 0), "0-1");
  EXPECT_EQ(share(c, 2), "2-3");
  EXPECT_EQ(share(c, 1), "4-5");
  EXPECT_EQ(share(c, 3), "6-7");
}

TEST(EngineCpuShare, NothingToSplitLeavesTheThreadAlone) {
  EXPECT_EQ(share(withCpus({{"0-1"}}), 0), "none");                // one rank
  EXPECT_EQ(share(withCpus({{"0", "1"}}), 0), "none");             // a launcher pinned each rank
  EXPECT_EQ(share(withCpus({{"0-1", "0-1", "0-1"}}), 2), "none");  // more ranks than CPUs
  EXPECT_EQ(share(withCpus({{"", ""}}), 1), "none");               // CPUs not known
  EXPECT_EQ(share(withCpus({{"0-1"}, {"0-1"}}), 1), "none");       // one rank a host
  EXPECT_EQ(share(withCpus({{"0-1", "0-1"}}), 5), "none");         // rank out of range
}

}  // namespace
}  // namespace braid::topo

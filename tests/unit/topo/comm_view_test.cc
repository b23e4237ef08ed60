// Rank views: encoding, strict decoding of untrusted bytes, and the merged
// communicator view (2 hosts x 4 ranks, two ranks per NUMA node).
#include <gtest/gtest.h>

#include <random>

#include "core/bootstrap/host_id.h"
#include "test_util.h"
#include "topo/comm_view.h"

namespace braid::topo {
namespace {

using testing::dgx;

std::vector<RankView> twoHosts() {
  HostTopology h = dgx();
  std::vector<RankView> views;
  for (int r = 0; r < 8; ++r) {
    RankView v;
    v.rank = r;
    v.hostId = r < 4 ? "nodeA:boot" : "nodeB:boot";
    v.hostname = r < 4 ? "nodeA" : "nodeB";
    v.numa = (r % 4) / 2;
    v.numaCount = 2;
    v.gpu = r % 4;
    v.nics = h.nics;
    views.push_back(v);
  }
  return views;
}

TEST(CommView, RankViewRoundTrip) {
  RankView v = twoHosts()[5];
  RankView back;
  Status st = decodeRankView(encodeRankView(v), &back);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(encodeRankView(back), encodeRankView(v));
  EXPECT_EQ(back.nics.size(), 6u);
  EXPECT_EQ(back.gpu, 1);
}

TEST(CommView, ThisProcessView) {
  HostTopology h = dgx();
  RankView v;
  ASSERT_TRUE(makeRankView(h, 3, &v).isOk());
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.hostId, bootstrap::localHostId());
  EXPECT_EQ(v.numaCount, 2);
  EXPECT_EQ(v.nics.size(), h.nics.size());
}

TEST(CommView, MergeGroupsHostsAndNumaNodes) {
  CommTopology c;
  ASSERT_TRUE(mergeRankViews(twoHosts(), &c).isOk());
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(c.hosts[1].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(c.hosts[1].hostname, "nodeB");
  EXPECT_EQ(c.hosts[0].nics.size(), 6u);
  EXPECT_TRUE(c.sameHost(4, 7));
  EXPECT_FALSE(c.sameHost(3, 4));
  EXPECT_TRUE(c.sameNuma(0, 1));
  EXPECT_FALSE(c.sameNuma(1, 2));
  EXPECT_FALSE(c.sameNuma(0, 4));  // same NUMA id, other host
  EXPECT_EQ(c.localRank[6], 2);
  EXPECT_EQ(c.ranksOnNuma(5, 0), (std::vector<int>{4, 5}));
  EXPECT_FALSE(c.sameHost(0, 99));

  CommTopology back;
  Status st = decodeCommTopology(encodeCommTopology(c), &back);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(encodeCommTopology(back), encodeCommTopology(c));
  EXPECT_EQ(back.hostOf, c.hostOf);
}

TEST(CommView, MergeRefusesInconsistentSets) {
  CommTopology c;
  EXPECT_EQ(mergeRankViews({}, &c).code(), Code::kInvalidArgument);
  std::vector<RankView> views = twoHosts();
  std::swap(views[2], views[3]);
  Status st = mergeRankViews(views, &c);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("rank order"), std::string::npos) << st.message();
  views = twoHosts();
  views[1].hostId.clear();
  EXPECT_EQ(mergeRankViews(views, &c).code(), Code::kInvalidArgument);
  // Ranks of one host that describe it differently: the lowest rank wins.
  views = twoHosts();
  views[2].nics.resize(1);
  ASSERT_TRUE(mergeRankViews(views, &c).isOk());
  EXPECT_EQ(c.hosts[0].nics.size(), 6u);
}

TEST(CommView, GarbageBytesAreRefused) {
  std::string good = encodeRankView(twoHosts()[0]);
  RankView v;
  for (std::string bad : {std::string(), std::string("\0\0\0", 3), std::string("{}"), std::string("null"),
                          good.substr(0, good.size() / 2), good + "x", std::string(2u << 20, ' ')}) {
    Status st = decodeRankView(bad, &v);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad.substr(0, 40);
  }
  std::string wrongType = good;
  wrongType.replace(wrongType.find("\"rank\":0"), 8, "\"rank\":\"0\"");
  EXPECT_NE(decodeRankView(wrongType, &v).message().find("rank view.rank"), std::string::npos);
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::string m = good;
    m[rng() % m.size()] = static_cast<char>(rng());
    Status st = decodeRankView(m, &v);
    if (!st.isOk()) {
      EXPECT_EQ(st.code(), Code::kInvalidArgument);
    }
  }
  CommTopology c;
  EXPECT_EQ(decodeCommTopology(good, &c).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace braid::topo

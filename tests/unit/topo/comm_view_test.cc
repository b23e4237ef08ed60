// Rank views: encoding, strict decoding of untrusted bytes, and the merged
// communicator view (2 hosts x 4 ranks, two ranks per NUMA node).
#include "topo/comm_view.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <random>

#include "core/bootstrap/host_id.h"
#include "test_util.h"

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
    v.cpus = CpuList({2 * (r % 4), 2 * (r % 4) + 1});  // pinned to two CPUs each, as a launcher would
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
  EXPECT_EQ(back.cpus, CpuList({2, 3}));
}

// Every other CPU of a big host: far longer than the other strings a view
// holds, and still read back whole.
TEST(CommView, AScatteredCpuSetRoundTrips) {
  RankView v = twoHosts()[0];
  std::vector<int> everyOther;
  for (int c = 0; c < 4096; c += 2) everyOther.push_back(c);
  v.cpus = CpuList(everyOther);
  RankView back;
  Status st = decodeRankView(encodeRankView(v), &back);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(back.cpus, v.cpus);
}

// A view from a peer that does not say its CPUs (or says nothing sensible)
// decodes to "not known" or is refused, never to a wrong set.
TEST(CommView, CpusAreOptionalAndChecked) {
  RankView v = twoHosts()[1];
  v.cpus = CpuList();
  std::string text = encodeRankView(v);
  const std::string field = "\"cpus\":\"\",";  // keys are sorted: it comes first
  ASSERT_NE(text.find(field), std::string::npos) << text;
  std::string without = text;
  without.erase(without.find(field), field.size());
  RankView back;
  ASSERT_TRUE(decodeRankView(without, &back).isOk()) << without;
  EXPECT_TRUE(back.cpus.empty());
  for (const char* bad : {"3-1", "0,,1", "x", "99999999"}) {
    std::string wrong = text;
    wrong.replace(wrong.find(field), field.size(), std::string("\"cpus\":\"") + bad + "\",");
    Status st = decodeRankView(wrong, &back);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("cpus"), std::string::npos) << st.message();
  }
}

TEST(CommView, ThisProcessView) {
  HostTopology h = dgx();
  RankView v;
  ASSERT_TRUE(makeRankView(h, 3, &v).isOk());
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.hostId, bootstrap::localHostId());
  EXPECT_EQ(v.numaCount, 2);
  EXPECT_EQ(v.nics.size(), h.nics.size());
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(v.cpus.size(), static_cast<size_t>(CPU_COUNT(&set)));
  for (int c : v.cpus.cpus()) EXPECT_TRUE(CPU_ISSET(c, &set)) << c;
}

// Views of one host's ranks with these CPU sets ({} = not known).
CommTopology oneHost(const std::vector<std::vector<int>>& sets) {
  std::vector<RankView> views;
  for (size_t r = 0; r < sets.size(); ++r) {
    RankView v;
    v.rank = static_cast<int>(r);
    v.hostId = "node:boot";
    v.hostname = "node";
    v.cpus = CpuList(sets[r]);
    views.push_back(v);
  }
  CommTopology c;
  EXPECT_TRUE(mergeRankViews(views, &c).isOk());
  return c;
}

TEST(CommView, RanksCompeteForCpusOnlyWhereTheirSetsOverlapAndRunShort) {
  // Unpinned on 2 CPUs: 2 ranks fit, 3 do not.
  EXPECT_FALSE(oneHost({{0, 1}, {0, 1}}).competesForCpus(0));
  EXPECT_TRUE(oneHost({{0, 1}, {0, 1}, {0, 1}}).competesForCpus(2));
  // Pinned a CPU each (braid-run --bind-to core, mpirun, srun): one CPU
  // apiece, nobody competes.
  CommTopology pinned = oneHost({{0}, {1}, {2}, {3}});
  for (int r = 0; r < 4; ++r) EXPECT_FALSE(pinned.competesForCpus(r)) << r;
  // Two ranks pinned to the same CPU compete; the others, on their own, do not.
  CommTopology doubled = oneHost({{0}, {0}, {1}, {2, 3}});
  EXPECT_TRUE(doubled.competesForCpus(0));
  EXPECT_TRUE(doubled.competesForCpus(1));
  EXPECT_FALSE(doubled.competesForCpus(2));
  EXPECT_FALSE(doubled.competesForCpus(3));
  // A set not known counts as sharing and adds no CPU: ranks that say
  // nothing are judged as before the views carried CPUs.
  EXPECT_FALSE(oneHost({{0, 1}, {}}).competesForCpus(0));
  EXPECT_TRUE(oneHost({{0}, {}}).competesForCpus(0));
  EXPECT_TRUE(oneHost({{}, {}}).competesForCpus(0));
  // Other hosts' ranks never count.
  std::vector<RankView> views = twoHosts();  // 4 ranks a host, two CPUs each, apart
  CommTopology two;
  ASSERT_TRUE(mergeRankViews(views, &two).isOk());
  for (int r = 0; r < 8; ++r) EXPECT_FALSE(two.competesForCpus(r)) << r;
  for (RankView& v : views) v.cpus = CpuList({0, 1, 2, 3});  // 4 ranks a host unpinned on 4 CPUs
  ASSERT_TRUE(mergeRankViews(views, &two).isOk());
  EXPECT_FALSE(two.competesForCpus(5));
  EXPECT_FALSE(two.competesForCpus(99));
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

// The hierarchical all-reduce over host layouts a real cluster has: equal
// hosts, uneven ones, a single host, one rank per host, and ranks placed
// round-robin (a host's ranks not contiguous), for every op, in place and
// out, small and large vectors (recursive doubling and ring between leaders),
// in random step orders.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "sim_case.h"

namespace braid::algo::test {
namespace {

struct Layout {
  const char* name;
  std::vector<int> hostOf;
};

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {"2x4", {0, 0, 0, 0, 1, 1, 1, 1}},
      {"3+1+4", {0, 0, 0, 1, 2, 2, 2, 2}},
      {"one host", {0, 0, 0, 0, 0}},
      {"one rank per host", {0, 1, 2, 3, 4, 5, 6}},
      {"round robin 3 hosts", {0, 1, 2, 0, 1, 2, 0, 1, 2, 0}},
      {"host ids not in order", {7, 3, 7, 3, 9}},
      {"single rank", {0}},
  };
  return all;
}

TEST(HierarchicalAllReduce, EveryLayoutOpAndSize) {
  const Algorithm* h = findAlgorithm(Collective::kAllReduce, "hierarchical");
  ASSERT_NE(h, nullptr);
  for (const Layout& l : layouts()) {
    SCOPED_TRACE(l.name);
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg})
      for (size_t count : {0, 1, 7, 100, 40000})  // 40000 int32: the ring between leaders
        for (bool inPlace : {false, true}) {
          SimCase c;
          c.algorithm = h;
          c.n = static_cast<int>(l.hostOf.size());
          c.count = count;
          c.op = op;
          c.inPlace = inPlace;
          c.hostOf = l.hostOf;
          c.chunkBytes = count > 1000 ? 4096 : 16;
          c.seed = count % 5;
          ASSERT_NO_FATAL_FAILURE(runSimCase(c));
        }
  }
}

TEST(HierarchicalAllGather, EveryLayoutAndSize) {
  const Algorithm* h = findAlgorithm(Collective::kAllGather, "hierarchical");
  ASSERT_NE(h, nullptr);
  for (const Layout& l : layouts()) {
    SCOPED_TRACE(l.name);
    for (size_t count : {0, 1, 7, 100, 3000})
      for (bool inPlace : {false, true})
        for (uint64_t seed : {0, 3}) {
          SimCase c;
          c.algorithm = h;
          c.n = static_cast<int>(l.hostOf.size());
          c.count = count;
          c.inPlace = inPlace;
          c.hostOf = l.hostOf;
          c.chunkBytes = count > 1000 ? 4096 : 16;  // several chunks a block, the last one short
          c.seed = seed;
          ASSERT_NO_FATAL_FAILURE(runSimCase(c));
        }
  }
}

// Only leaders cross hosts, and each host's link carries exactly the other
// hosts' blocks once in each direction.
TEST(HierarchicalAllGather, LeadersMoveEachOtherHostsBlocksOnce) {
  const Algorithm* h = findAlgorithm(Collective::kAllGather, "hierarchical");
  const std::vector<int> hostOf = {0, 0, 1, 1, 2, 2, 2};
  const size_t count = 10, blockBytes = count * 4;
  for (int r = 0; r < 7; ++r) {
    CollectiveArgs a;
    a.collective = Collective::kAllGather;
    a.nranks = 7;
    a.rank = r;
    a.count = count;
    a.dtype = DataType::kFloat32;
    a.hostOf = hostOf;
    Schedule s;
    ASSERT_TRUE(h->build(a, &s).isOk());
    size_t crossIn = 0, crossOut = 0;
    for (const Step& st : s.steps) {
      if (st.kind != StepKind::kSend && st.kind != StepKind::kRecv) continue;
      if (hostOf[st.peer] == hostOf[r]) continue;
      EXPECT_TRUE(r == 0 || r == 2 || r == 4)
          << "rank " << r << " is no leader but talks to rank " << st.peer;
      (st.kind == StepKind::kSend ? crossOut : crossIn) +=
          (st.kind == StepKind::kSend ? st.src : st.dst).bytes;
    }
    if (r == 0 || r == 2 || r == 4) {
      const size_t others = 7 - (hostOf[r] == 2 ? 3 : 2);
      EXPECT_EQ(crossIn, others * blockBytes) << "leader " << r;
      // Around the ring a leader forwards every host's blocks but its right neighbour's.
      const size_t rightHost = r == 0 ? 2 : r == 2 ? 3 : 2;
      EXPECT_EQ(crossOut, (7 - rightHost) * blockBytes) << "leader " << r;
    }
  }
}

TEST(HierarchicalAllReduce, RandomStepOrders) {
  const Algorithm* h = findAlgorithm(Collective::kAllReduce, "hierarchical");
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SimCase c;
    c.algorithm = h;
    c.n = 10;
    c.count = 333;
    c.hostOf = layouts()[4].hostOf;
    c.seed = seed;
    ASSERT_NO_FATAL_FAILURE(runSimCase(c));
  }
}

// Only leaders talk across hosts: a non-leader's schedule names its leader
// and nobody else.
TEST(HierarchicalAllReduce, OnlyLeadersCrossHosts) {
  const Algorithm* h = findAlgorithm(Collective::kAllReduce, "hierarchical");
  const std::vector<int> hostOf = {0, 1, 0, 1, 0, 1};  // leaders 0 and 1
  for (int r = 0; r < 6; ++r) {
    CollectiveArgs a;
    a.nranks = 6;
    a.rank = r;
    a.count = 1000;
    a.dtype = DataType::kFloat32;
    a.hostOf = hostOf;
    Schedule s;
    ASSERT_TRUE(h->build(a, &s).isOk());
    for (const Step& st : s.steps) {
      if (st.peer < 0) continue;
      if (r >= 2) EXPECT_EQ(st.peer, r % 2) << "rank " << r;
      else EXPECT_TRUE(hostOf[st.peer] == hostOf[r] || st.peer == 1 - r) << "rank " << r << " peer " << st.peer;
    }
  }
}

// The tuner ranks it only where a host has several ranks: with one rank a
// host it would be the leaders' ring under another name.
TEST(HierarchicalAllReduce, RankedOnlyWhereAHostHasSeveralRanks) {
  const Algorithm* h = findAlgorithm(Collective::kAllReduce, "hierarchical");
  ASSERT_NE(h, nullptr);
  EXPECT_TRUE(h->sharedHostsOnly);
}

// A large vector's phases overlap chunk by chunk, with phase chunks (64 KiB)
// that do not line up with the leaders' ring chunks (near-equal parts of each
// segment): 270001 int32 cross every kind of boundary, the short last chunk
// included, in schedule order and in random step orders. Avg checks that a
// chunk is divided only after phase 2 has stopped reading it too.
TEST(HierarchicalAllReduce, LargeVectorsOverlapThePhases) {
  const Algorithm* h = findAlgorithm(Collective::kAllReduce, "hierarchical");
  for (size_t l : {size_t{0}, size_t{1}, size_t{4}}) {
    SCOPED_TRACE(layouts()[l].name);
    for (RedOp op : {RedOp::kSum, RedOp::kAvg, RedOp::kMax})
      for (bool inPlace : {false, true})
        for (uint64_t seed : {uint64_t{0}, uint64_t{3}}) {
          SimCase c;
          c.algorithm = h;
          c.n = static_cast<int>(layouts()[l].hostOf.size());
          c.count = 270001;
          c.op = op;
          c.inPlace = inPlace;
          c.hostOf = layouts()[l].hostOf;
          c.chunkBytes = 65536;
          c.seed = seed;
          ASSERT_NO_FATAL_FAILURE(runSimCase(c));
        }
  }
}

}  // namespace
}  // namespace braid::algo::test

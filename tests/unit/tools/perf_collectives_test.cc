// The collective table against braid.h's semantics: every rank's buffers are
// prepared as braid-perf prepares them, a reference implementation written
// from braid.h's contracts moves and reduces the data, and countWrong must
// then find nothing wrong, and exactly the elements we corrupt.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <vector>

#include "checks.h"
#include "codec.h"
#include "collectives.h"
#include "types.h"

namespace braid::perf {
namespace {

struct RankBuffers {
  std::vector<char> send, recv;
  CallBuffers call;
};

int64_t at(const void* buf, size_t i, braidDataType_t t) { return loadInt(buf, i, t).value(); }

bool rootOnlyOutput(const Collective& c) {
  return c.kind == CollectiveKind::kReduce || c.kind == CollectiveKind::kGather;
}

// What braid.h promises each collective computes; c.count per braid.h's meaning.
void reference(const Collective& c, const ValuePlan& plan, const Layout& l, int root,
               std::vector<RankBuffers>& ranks) {
  const int n = static_cast<int>(ranks.size());
  const braidDataType_t t = plan.type;
  // PreMulSum: the sum of each rank's input times its scalar.
  auto input = [&](int r, size_t sendIndex) {
    const int64_t v = at(ranks[r].call.send, sendIndex, t);
    return plan.op == kPreMulSumOp ? v * preMulScalar(plan, r) : v;
  };
  auto reduce = [&](size_t sendIndex) {
    int64_t acc = input(0, sendIndex);
    for (int r = 1; r < n; ++r) {
      const int64_t v = input(r, sendIndex);
      acc = plan.op == braidProd  ? acc * v
            : plan.op == braidMax ? std::max(acc, v)
            : plan.op == braidMin ? std::min(acc, v)
                                  : acc + v;
    }
    return plan.op == braidAvg ? acc / n : acc;
  };
  // Results first, then writes: in place, outputs overlap inputs.
  std::vector<std::vector<int64_t>> out(n, std::vector<int64_t>(l.recvCount));
  for (int me = 0; me < n; ++me) {
    for (size_t k = 0; k < l.recvCount; ++k) {
      const size_t block = l.count ? k / l.count : 0, off = l.count ? k % l.count : 0;
      switch (c.kind) {
        case CollectiveKind::kAllReduce:
          out[me][k] = reduce(k);
          break;
        case CollectiveKind::kReduce:
          out[me][k] = me == root ? reduce(k) : 0;
          break;
        case CollectiveKind::kReduceScatter:
          out[me][k] = reduce(me * l.count + k);
          break;
        case CollectiveKind::kBroadcast:
          out[me][k] = at(ranks[root].call.send, k, t);
          break;
        case CollectiveKind::kAllGather:
          out[me][k] = at(ranks[block].call.send, off, t);
          break;
        case CollectiveKind::kAllToAll:
          out[me][k] = at(ranks[block].call.send, me * l.count + off, t);
          break;
        case CollectiveKind::kSendRecv:
          out[me][k] = at(ranks[(me + n - 1) % n].call.send, k, t);
          break;
        case CollectiveKind::kGather:
          out[me][k] = me == root ? at(ranks[block].call.send, off, t) : 0;
          break;
        case CollectiveKind::kScatter:
          out[me][k] = at(ranks[root].call.send, me * l.count + k, t);
          break;
      }
    }
  }
  for (int me = 0; me < n; ++me) {
    if (rootOnlyOutput(c) && me != root) continue;  // recv untouched off root
    for (size_t k = 0; k < l.recvCount; ++k) storeInt(ranks[me].call.recv, k, t, out[me][k]);
  }
}

// braid.h: in place means send == recv, except all-gather
// (send == recv + rank*sendcount), reduce-scatter (send + rank*recvcount ==
// recv), gather (send == recv + root*count) and scatter (send + root*count == recv).
void expectInPlaceConvention(const Collective& c, const Layout& l, int rank, int root, size_t ts,
                             const RankBuffers& b) {
  const char* base = b.recv.data();
  const char* send = static_cast<const char*>(b.call.send);
  const char* recv = static_cast<const char*>(b.call.recv);
  if (c.kind == CollectiveKind::kAllGather) {
    EXPECT_EQ(recv, base);
    EXPECT_EQ(send, base + rank * l.count * ts);
  } else if (c.kind == CollectiveKind::kReduceScatter) {
    EXPECT_EQ(send, base);
    EXPECT_EQ(recv, base + rank * l.count * ts);
  } else if (c.kind == CollectiveKind::kGather) {
    EXPECT_EQ(recv, base);
    EXPECT_EQ(send, base + root * l.count * ts);
  } else if (c.kind == CollectiveKind::kScatter) {
    EXPECT_EQ(send, base);
    EXPECT_EQ(recv, base + root * l.count * ts);
  } else {
    EXPECT_EQ(send, base);
    EXPECT_EQ(recv, base);
  }
}

struct Case {
  const char* collective;
  braidDataType_t type;
  int nranks;
  bool inPlace;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.collective << " " << typeInfo(c.type).name << " n=" << c.nranks << (c.inPlace ? " in place" : "");
}

void runCase(const Case& cs, braidRedOp_t op, size_t bytes) {
  const Collective& c = *findCollective(cs.collective);
  const int n = cs.nranks;
  const int root = n - 1;
  const ValuePlan plan = makePlan(cs.type, c.reduces ? std::optional(op) : std::nullopt, n);
  const size_t ts = typeInfo(cs.type).size;
  std::vector<RankBuffers> ranks(n);
  std::vector<Layout> layouts;
  for (int r = 0; r < n; ++r) {
    const Layout l = c.layout(bytes, ts, n, r, root);
    layouts.push_back(l);
    ranks[r].send.resize(std::max<size_t>(bytes, 1));
    ranks[r].recv.resize(std::max<size_t>(bytes, 1));
    ranks[r].call =
        prepareBuffers(c, plan, l, r, root, cs.inPlace, ranks[r].send.data(), ranks[r].recv.data());
    ASSERT_LE(std::max(l.sendCount, l.recvCount) * ts, bytes);
    if (cs.inPlace) expectInPlaceConvention(c, l, r, root, ts, ranks[r]);
  }
  // Out of place, nothing is written yet: every checked element is wrong
  // (poison). In place, the inputs already sit in the output, partly right.
  for (int r = 0; r < n && !cs.inPlace; ++r) {
    const int64_t checked = rootOnlyOutput(c) && r != root ? 0 : layouts[r].recvCount;
    EXPECT_EQ(countWrong(c, plan, layouts[r], r, root, ranks[r].call.recv), checked) << r;
  }
  reference(c, plan, layouts[0], root, ranks);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(countWrong(c, plan, layouts[r], r, root, ranks[r].call.recv), 0) << "rank " << r;
  }
  // Corrupt one checked element per rank: exactly one wrong.
  for (int r = 0; r < n; ++r) {
    if (layouts[r].recvCount == 0 || (rootOnlyOutput(c) && r != root)) continue;
    const size_t k = layouts[r].recvCount / 2;
    const int64_t v = loadInt(ranks[r].call.recv, k, cs.type).value();
    storeInt(ranks[r].call.recv, k, cs.type, v == 0 ? 1 : 0);
    EXPECT_EQ(countWrong(c, plan, layouts[r], r, root, ranks[r].call.recv), 1) << "rank " << r;
  }
}

class PerfCollectives : public ::testing::TestWithParam<Case> {};

TEST_P(PerfCollectives, ReferenceResultsCheckCleanAndCorruptionIsCounted) {
  const Case cs = GetParam();
  const Collective& c = *findCollective(cs.collective);
  const std::vector<braidRedOp_t> ops = c.reduces ? allOps() : std::vector<braidRedOp_t>{braidSum};
  for (braidRedOp_t op : ops) {
    for (size_t bytes : {size_t{0}, size_t{24}, size_t{1000}, size_t{4096}}) {
      SCOPED_TRACE(::testing::Message() << opName(op) << " bytes " << bytes);
      runCase(cs, op, bytes);
    }
  }
}

std::vector<Case> allCases() {
  std::vector<Case> v;
  for (const Collective& c : collectives()) {
    for (braidDataType_t t : {braidFloat32, braidInt8, braidUint8, braidFloat8e5m2, braidBfloat16}) {
      for (int n : {1, 3, 4}) {
        v.push_back({c.name, t, n, false});
        if (c.hasInPlace) v.push_back({c.name, t, n, true});
      }
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, PerfCollectives, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.collective) + "_" + typeInfo(info.param.type).name +
                                  "_n" + std::to_string(info.param.nranks) +
                                  (info.param.inPlace ? "_inplace" : "");
                         });

TEST(PerfCollectivesTable, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(findCollective("allreduce")->busFactor(4), 1.5);
  EXPECT_DOUBLE_EQ(findCollective("allreduce")->busFactor(1), 0.0);
  EXPECT_DOUBLE_EQ(findCollective("allgather")->busFactor(4), 0.75);
  EXPECT_DOUBLE_EQ(findCollective("reducescatter")->busFactor(8), 0.875);
  EXPECT_DOUBLE_EQ(findCollective("alltoall")->busFactor(2), 0.5);
  EXPECT_DOUBLE_EQ(findCollective("broadcast")->busFactor(4), 1.0);
  EXPECT_DOUBLE_EQ(findCollective("reduce")->busFactor(4), 1.0);
  EXPECT_DOUBLE_EQ(findCollective("sendrecv")->busFactor(4), 1.0);
  EXPECT_DOUBLE_EQ(findCollective("gather")->busFactor(4), 0.75);
  EXPECT_DOUBLE_EQ(findCollective("scatter")->busFactor(4), 0.75);
  EXPECT_EQ(findCollective("nope"), nullptr);
}

TEST(PerfCollectivesTable, SizesMeanWhatNcclTestsMeans) {
  // all-gather: size is the gathered buffer; count is each rank's share.
  Layout l = findCollective("allgather")->layout(1024, 4, 4, 2, 0);
  EXPECT_EQ(l.count, 64u);
  EXPECT_EQ(l.sendCount, 64u);
  EXPECT_EQ(l.recvCount, 256u);
  EXPECT_EQ(l.bytes, 1024u);
  EXPECT_EQ(l.inPlaceSendOffset, 128u);
  // reduce-scatter: size is the send buffer; a remainder is dropped.
  l = findCollective("reducescatter")->layout(1000, 4, 3, 1, 0);
  EXPECT_EQ(l.count, 83u);
  EXPECT_EQ(l.sendCount, 249u);
  EXPECT_EQ(l.bytes, 996u);
  EXPECT_EQ(l.inPlaceRecvOffset, 83u);
  // all-to-all: count per peer.
  l = findCollective("alltoall")->layout(4096, 8, 4, 0, 0);
  EXPECT_EQ(l.count, 128u);
  EXPECT_EQ(l.sendCount, 512u);
  // gather and scatter: as all-gather and reduce-scatter, with the root's
  // place (not this rank's) in place, on every rank.
  l = findCollective("gather")->layout(1024, 4, 4, 1, 3);
  EXPECT_EQ(l.count, 64u);
  EXPECT_EQ(l.recvCount, 256u);
  EXPECT_EQ(l.bytes, 1024u);
  EXPECT_EQ(l.inPlaceSendOffset, 192u);
  l = findCollective("scatter")->layout(1000, 4, 3, 0, 2);
  EXPECT_EQ(l.count, 83u);
  EXPECT_EQ(l.sendCount, 249u);
  EXPECT_EQ(l.bytes, 996u);
  EXPECT_EQ(l.inPlaceRecvOffset, 166u);
  // the rest: the whole buffer.
  l = findCollective("allreduce")->layout(4096, 2, 4, 3, 0);
  EXPECT_EQ(l.count, 2048u);
  EXPECT_EQ(l.bytes, 4096u);
}

}  // namespace
}  // namespace braid::perf

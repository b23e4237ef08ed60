// Every registered algorithm, run for all ranks at once in the schedule
// simulator, against a reference computed here: any N from 1 to 17, counts
// below, at and above N, small chunks so that pipelining is exercised.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/sim/simulator.h"

namespace braid::algo {
namespace {

// int32 inputs keep every reduction exact, so the reference is unambiguous.
int32_t inputValue(int rank, size_t i) { return static_cast<int32_t>((rank + 1) * 3 + i % 7) - 5; }

int32_t combine(int32_t a, int32_t b, RedOp op) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return a + b;
    case RedOp::kProd: return a * b;
    case RedOp::kMax: return std::max(a, b);
    case RedOp::kMin: return std::min(a, b);
  }
  return 0;
}

int32_t reduced(int n, size_t i, RedOp op) {
  int32_t acc = inputValue(0, i);
  for (int r = 1; r < n; ++r) acc = combine(acc, inputValue(r, i), op);
  return op == RedOp::kAvg ? acc / n : acc;
}

struct Case {
  const Algorithm* algorithm;
  int n;
  size_t count;
  RedOp op;
  int root;
  bool inPlace;
};

std::string describe(const Case& c) {
  return std::string(collectiveName(c.algorithm->collective)) + ":" + c.algorithm->name + " n=" +
         std::to_string(c.n) + " count=" + std::to_string(c.count) + " op=" + redOpName(c.op) +
         " root=" + std::to_string(c.root) + (c.inPlace ? " in-place" : "");
}

// Buffer sizes (elements) of input and output per collective.
void sizes(const Case& c, size_t* in, size_t* out) {
  const size_t n = c.n, k = c.count;
  switch (c.algorithm->collective) {
    case Collective::kAllGather: *in = k, *out = k * n; break;
    case Collective::kReduceScatter: *in = k * n, *out = k; break;
    case Collective::kAllToAll: *in = k * n, *out = k * n; break;
    default: *in = k, *out = k;
  }
}

int32_t expected(const Case& c, int rank, size_t i) {
  const size_t k = c.count;
  switch (c.algorithm->collective) {
    case Collective::kAllReduce: return reduced(c.n, i, c.op);
    case Collective::kReduce: return reduced(c.n, i, c.op);
    case Collective::kBroadcast: return inputValue(c.root, i);
    case Collective::kAllGather: return inputValue(static_cast<int>(i / k), i % k);
    case Collective::kReduceScatter: return reduced(c.n, rank * k + i, c.op);
    case Collective::kAllToAll: return inputValue(static_cast<int>(i / k), rank * k + i % k);
    default: return 0;
  }
}

void runCase(const Case& c) {
  SCOPED_TRACE(describe(c));
  size_t inCount, outCount;
  sizes(c, &inCount, &outCount);
  std::vector<std::vector<int32_t>> in(c.n), out(c.n);
  std::vector<Schedule> schedules(c.n);
  std::vector<SimRank> ranks(c.n);
  const bool rootOnlyOutput = c.algorithm->collective == Collective::kReduce;
  for (int r = 0; r < c.n; ++r) {
    in[r].resize(inCount);
    for (size_t i = 0; i < inCount; ++i) in[r][i] = inputValue(r, i);
    CollectiveArgs a;
    a.collective = c.algorithm->collective;
    a.nranks = c.n;
    a.rank = r;
    a.count = c.count;
    a.dtype = DataType::kInt32;
    a.op = c.op;
    a.root = c.root;
    a.chunkBytes = 16;  // many chunks even for small counts
    ASSERT_TRUE(c.algorithm->build(a, &schedules[r]).isOk());
    void* inPtr = in[r].data();
    void* outPtr;
    if (c.inPlace) {
      // The documented in-place layouts.
      switch (a.collective) {
        case Collective::kAllGather:
          out[r].assign(outCount, -999);
          std::copy(in[r].begin(), in[r].end(), out[r].begin() + r * c.count);
          inPtr = out[r].data() + r * c.count;
          outPtr = out[r].data();
          break;
        case Collective::kReduceScatter:
          outPtr = in[r].data() + r * c.count;
          break;
        default:
          outPtr = inPtr;
      }
    } else {
      out[r].assign(outCount, -999);
      outPtr = out[r].data();
    }
    if (rootOnlyOutput && r != c.root) outPtr = nullptr;
    std::vector<size_t> bytes = {inCount * 4, outCount * 4};
    ASSERT_TRUE(schedules[r].validate(c.n, bytes).isOk()) << schedules[r].validate(c.n, bytes).message();
    ranks[r] = {&schedules[r], {inPtr, outPtr}};
  }
  Status st = simulate(ranks);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (int r = 0; r < c.n; ++r) {
    if (rootOnlyOutput && r != c.root) continue;
    const int32_t* result = static_cast<const int32_t*>(ranks[r].buffers[1]);
    for (size_t i = 0; i < outCount; ++i)
      ASSERT_EQ(result[i], expected(c, r, i)) << "rank " << r << " element " << i;
  }
}

const Collective kCollectives[] = {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce,
                                   Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll};

TEST(SimulatedCollectives, EveryAlgorithmEveryRankCount) {
  for (const Algorithm& alg : registeredAlgorithms()) {
    if (std::find(std::begin(kCollectives), std::end(kCollectives), alg.collective) == std::end(kCollectives))
      continue;
    const bool reduces = alg.collective == Collective::kAllReduce || alg.collective == Collective::kReduce ||
                         alg.collective == Collective::kReduceScatter;
    for (int n = 1; n <= 17; ++n) {
      for (size_t count : {size_t(0), size_t(1), size_t(n > 1 ? n - 1 : 1), size_t(n), size_t(37), size_t(101)}) {
        for (RedOp op : {RedOp::kSum, RedOp::kMax, RedOp::kMin, RedOp::kAvg}) {
          if (!reduces && op != RedOp::kSum) continue;
          for (bool inPlace : {false, true}) {
            if (alg.collective == Collective::kAllToAll && inPlace) continue;
            int roots = (alg.collective == Collective::kBroadcast || alg.collective == Collective::kReduce) ? n : 1;
            for (int root = 0; root < roots; root += (n > 5 ? 3 : 1)) {
              runCase({&alg, n, count, op, root, inPlace});
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

TEST(SimulatedCollectives, BarrierCompletesForEveryRankCount) {
  const Algorithm* alg = findAlgorithm(Collective::kBarrier, "dissemination");
  ASSERT_NE(alg, nullptr);
  for (int n = 1; n <= 33; ++n) {
    std::vector<Schedule> schedules(n);
    std::vector<SimRank> ranks(n);
    for (int r = 0; r < n; ++r) {
      CollectiveArgs a;
      a.collective = Collective::kBarrier;
      a.nranks = n;
      a.rank = r;
      ASSERT_TRUE(alg->build(a, &schedules[r]).isOk());
      ranks[r] = {&schedules[r], {nullptr, nullptr}};
    }
    Status st = simulate(ranks);
    ASSERT_TRUE(st.isOk()) << "n=" << n << ": " << st.message();
  }
}

TEST(SimulatedCollectives, PairwiseAllToAllvWithZeros) {
  const Algorithm* alg = findAlgorithm(Collective::kAllToAllv, "pairwise");
  ASSERT_NE(alg, nullptr);
  for (int n : {1, 2, 3, 5, 8}) {
    // Rank a sends (a + b) % 3 elements to rank b (zero for some pairs).
    auto cnt = [](int a, int b) { return static_cast<size_t>((a + b) % 3); };
    std::vector<Schedule> schedules(n);
    std::vector<SimRank> ranks(n);
    std::vector<std::vector<int32_t>> in(n), out(n);
    for (int r = 0; r < n; ++r) {
      CollectiveArgs a;
      a.collective = Collective::kAllToAllv;
      a.nranks = n;
      a.rank = r;
      a.dtype = DataType::kInt32;
      size_t so = 0, ro = 0;
      for (int p = 0; p < n; ++p) {
        a.sendCounts.push_back(cnt(r, p));
        a.sendDispls.push_back(so);
        so += cnt(r, p) + 1;  // gaps between blocks must stay untouched
        a.recvCounts.push_back(cnt(p, r));
        a.recvDispls.push_back(ro);
        ro += cnt(p, r) + 1;
      }
      in[r].resize(so);
      for (int p = 0; p < n; ++p)
        for (size_t i = 0; i < cnt(r, p); ++i) in[r][a.sendDispls[p] + i] = r * 1000 + p * 10 + static_cast<int>(i);
      out[r].assign(ro, -1);
      ASSERT_TRUE(alg->build(a, &schedules[r]).isOk());
      ranks[r] = {&schedules[r], {in[r].data(), out[r].data()}};
    }
    ASSERT_TRUE(simulate(ranks).isOk());
    for (int r = 0; r < n; ++r) {
      size_t ro = 0;
      for (int p = 0; p < n; ++p) {
        for (size_t i = 0; i < cnt(p, r); ++i) EXPECT_EQ(out[r][ro + i], p * 1000 + r * 10 + static_cast<int>(i));
        EXPECT_EQ(out[r][ro + cnt(p, r)], -1) << "gap after block " << p << " was written";
        ro += cnt(p, r) + 1;
      }
    }
  }
}

TEST(AlgorithmOverrides, ParsesAndRejectsClearly) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:ring; broadcast:chain", &o).isOk());
  ASSERT_NE(o.forced(Collective::kAllReduce), nullptr);
  EXPECT_STREQ(o.forced(Collective::kAllReduce)->name, "ring");
  EXPECT_EQ(o.forced(Collective::kAllGather), nullptr);
  Status bad = AlgorithmOverrides::parse("allreduce:nosuch", &o);
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("nosuch"), std::string::npos);
  EXPECT_NE(bad.message().find("ring"), std::string::npos);  // lists the known ones
  EXPECT_EQ(AlgorithmOverrides::parse("frobnicate:ring", &o).code(), Code::kInvalidArgument);
  EXPECT_EQ(AlgorithmOverrides::parse("allreduce", &o).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace braid::algo

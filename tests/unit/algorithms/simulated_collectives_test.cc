// Every registered algorithm, run for all ranks at once in the schedule
// simulator (sim_case.h), against a reference: every N from 1 to 64 and
// 127, 128, 129, 1000, 1024, with random counts (0, below N, above N), small
// chunks so that pipelining is exercised, and with the steps of all ranks run
// in random orders (seeded) so that a missing dependency shows up as wrong data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/sim/simulator.h"
#include "sim_case.h"

namespace braid::algo {
namespace {

using test::SimCase;

const Collective kCollectives[] = {Collective::kAllReduce, Collective::kBroadcast,     Collective::kReduce,
                                   Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll,
                                   Collective::kGather,    Collective::kScatter};

std::vector<const Algorithm*> collectiveAlgorithms() {
  static const std::vector<Algorithm> all = registeredAlgorithms();
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : all)
    if (std::find(std::begin(kCollectives), std::end(kCollectives), a.collective) != std::end(kCollectives))
      out.push_back(&a);
  return out;
}

const RedOp kOps[] = {RedOp::kSum, RedOp::kMax, RedOp::kMin, RedOp::kAvg};

size_t pick(std::mt19937_64& rng, size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi)(rng); }

// Counts for one (algorithm, n): 0, one below N, one above. Blockwise
// collectives move N * count per rank, N^2 * count in all: small counts at
// large N (count 0 costs nothing: every step is dropped).
std::vector<size_t> countsFor(std::mt19937_64& rng, Collective c, int n) {
  if (test::blockwise(c) && n > 64) return {0, 1, pick(rng, 2, 4)};
  if (n > 64) return {0, pick(rng, 1, n - 1), pick(rng, n, 3 * n)};
  return {0, n > 1 ? pick(rng, 1, n - 1) : 1, pick(rng, n, 3 * n + 40)};
}

// Runs the case for every op x in/out of place (ops only where they matter)
// at a few roots: 0, N-1 and a random one.
void sweep(const Algorithm* alg, int n, size_t count, std::mt19937_64& rng, int opsPerCount, uint64_t seed) {
  const Collective c = alg->collective;
  std::vector<int> roots{0};
  if (test::rooted(c) && n > 1) roots = {0, n - 1, static_cast<int>(pick(rng, 0, n - 1))};
  std::vector<std::pair<RedOp, bool>> variants;
  for (RedOp op : kOps)
    for (bool inPlace : {false, true}) {
      if (!test::reduces(c) && op != RedOp::kSum) continue;
      if (c == Collective::kAllToAll && inPlace) continue;  // all-to-all has no in-place form
      variants.push_back({op, inPlace});
    }
  std::shuffle(variants.begin(), variants.end(), rng);
  if (opsPerCount > 0 && variants.size() > static_cast<size_t>(opsPerCount)) variants.resize(opsPerCount);
  for (auto [op, inPlace] : variants)
    for (int root : roots) {
      SimCase sc{alg, n, count, op, root, inPlace, seed, SimCase{}.chunkBytes, {}};
      // Small chunks pipeline even small counts; fewer of them at large N,
      // where the rank count, not the chunking, is what is being tested.
      sc.chunkBytes = n <= 17 ? 16 : n <= 64 ? 64 : 512;
      test::runSimCase(sc);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

void sweepRankCounts(const std::vector<int>& ns, int opsPerCount, uint64_t rngSeed, uint64_t orderSeed = 0) {
  std::mt19937_64 rng(rngSeed);
  for (const Algorithm* alg : collectiveAlgorithms())
    for (int n : ns)
      for (size_t count : countsFor(rng, alg->collective, n)) {
        sweep(alg, n, count, rng, opsPerCount, orderSeed);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int n = lo; n <= hi; ++n) v.push_back(n);
  return v;
}

// Every op and in/out of place at small N, two of them (drawn) above.
TEST(SimulatedCollectives, RankCounts1To17) { sweepRankCounts(range(1, 17), 0, 1); }
TEST(SimulatedCollectives, RankCounts18To40) { sweepRankCounts(range(18, 40), 2, 2); }
TEST(SimulatedCollectives, RankCounts41To64) { sweepRankCounts(range(41, 64), 2, 3); }

// Large N: a few counts, one op each; steps in a random order at 127..129
// (at 1000+ a random order across all ranks is cache-bound and slow, while
// what large N tests is the structure, not the ordering).
TEST(SimulatedCollectives, RankCounts127To129) { sweepRankCounts({127, 128, 129}, 1, 4, 11); }
TEST(SimulatedCollectives, RankCount1000) { sweepRankCounts({1000}, 1, 5); }
TEST(SimulatedCollectives, RankCount1024) { sweepRankCounts({1024}, 1, 6); }

// The same algorithms with the steps of all ranks run in random orders: any
// order the dependencies allow is one a real executor may take.
TEST(SimulatedCollectives, RandomStepOrders) {
  std::mt19937_64 rng(5);
  for (const Algorithm* alg : collectiveAlgorithms())
    for (int n : {2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 24, 33}) {
      for (uint64_t seed = 1; seed <= 8; ++seed) {
        const size_t count = pick(rng, 0, 3 * n + 40);
        sweep(alg, n, count, rng, 2, seed * 7919 + n);
        if (HasFatalFailure()) return;
      }
    }
}

// PreMulSum around every reducing algorithm: per-rank scalars -2..2 (zero and
// negative among them), in and out of place, fixed and random step orders,
// and for the hierarchical ones ranks spread over hosts unevenly.
TEST(SimulatedCollectives, PreMulSumAroundEveryReducingAlgorithm) {
  std::mt19937_64 rng(7);
  for (const Algorithm* alg : collectiveAlgorithms()) {
    if (!test::reduces(alg->collective)) continue;
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 17, 33}) {
      std::vector<int> hostOf;
      if (alg->sharedHostsOnly)
        for (int r = 0; r < n; ++r) hostOf.push_back(r < 3 ? 0 : 1 + r % 2);
      for (size_t count : countsFor(rng, alg->collective, n))
        for (bool inPlace : {false, true})
          for (uint64_t seed : {uint64_t{0}, uint64_t{31} * n + count}) {
            SimCase sc{alg,     n,    count, RedOp::kSum, n > 1 ? static_cast<int>(count % n) : 0,
                       inPlace, seed, 16,    hostOf};
            sc.preMultiply = true;
            test::runSimCase(sc);
            if (HasFatalFailure()) return;
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

// Every algorithm of every collective, forced through BRAID_ALGO exactly as a
// user would, over real rank processes: a reduced correctness matrix
// (matrix.h) per algorithm and rank count. Reducing collectives run every
// dtype for Sum and every op for float32 and int32; counts 0, 1, 7, 4099 and
// 65539 (per block: 65539 / N for the block collectives), in and out of place,
// every root at counts 0 and 1, roots 0 and N-1 above. BRAID_CHUNK_BYTES=4096
// makes the larger counts pipeline through many chunks. The hierarchical
// all-reduce and all-gather run on pretend hosts of three ranks (BRAID_HOSTID).
//
// The list of algorithms is written out here (the test sees only the public
// API); KnownAlgorithms.MatchRegistry checks it against the names the library
// itself lists when BRAID_ALGO names an unknown one, so a new algorithm cannot
// be left out silently.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "harness.h"
#include "matrix.h"

namespace braid::itest {
namespace {

struct Forced {
  Coll coll;
  const char* collective;  // as BRAID_ALGO spells it
  const char* algorithm;
};

const Forced kAlgorithms[] = {
    {Coll::kAllReduce, "allreduce", "ring"},
    {Coll::kAllReduce, "allreduce", "rd"},
    {Coll::kAllReduce, "allreduce", "rhd"},
    {Coll::kAllReduce, "allreduce", "tree"},
    {Coll::kAllReduce, "allreduce", "hierarchical"},
    {Coll::kAllGather, "allgather", "hierarchical"},
    {Coll::kBroadcast, "broadcast", "chain"},
    {Coll::kBroadcast, "broadcast", "binomial"},
    {Coll::kReduce, "reduce", "chain"},
    {Coll::kReduce, "reduce", "binomial"},
    {Coll::kAllGather, "allgather", "ring"},
    {Coll::kAllGather, "allgather", "rd"},
    {Coll::kReduceScatter, "reducescatter", "ring"},
    {Coll::kReduceScatter, "reducescatter", "rh"},
    {Coll::kAllToAll, "alltoall", "pairwise"},
    {Coll::kAllToAll, "alltoall", "bruck"},
    {Coll::kAllToAllv, "alltoallv", "pairwise"},
    {Coll::kGather, "gather", "linear"},
    {Coll::kGather, "gather", "binomial"},
    {Coll::kScatter, "scatter", "linear"},
    {Coll::kScatter, "scatter", "binomial"},
};

const int kRankCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16};

bool reducing(Coll c) { return c == Coll::kAllReduce || c == Coll::kReduce || c == Coll::kReduceScatter; }

std::vector<Case> casesFor(const Forced& f, int n) {
  MatrixOptions m;
  m.counts = {0, 1, 7, 4099};
  m.bigCount = 65539;
  m.bigTypes.clear();
  for (int t = 0; t < braidNumTypes; ++t) m.bigTypes.push_back(static_cast<braidDataType_t>(t));
  m.smallRootCount = 1;
  m.only = {f.coll};
  std::vector<Case> cases;
  for (const Case& c : buildMatrix(n, m))
    if (!reducing(c.coll) || c.op == braidSum || c.type == braidFloat32 || c.type == braidInt32) cases.push_back(c);
  return cases;
}

// Runs in a rank process: the environment is read at init, so it is set first.
braidComm_t initForced(const RankContext& ctx, const std::string& algo) {
  setenv("BRAID_ALGO", algo.c_str(), 1);
  setenv("BRAID_CHUNK_BYTES", "4096", 1);
  if (algo.ends_with(":hierarchical")) {
    // Pretend hosts of three ranks each (the last may be short): shared
    // memory inside a host, TCP between them, as on a real cluster.
    std::string host = "pretend-host-";
    setenv("BRAID_HOSTID", host.append(std::to_string(ctx.rank / 3)).c_str(), 1);
  }
  braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
  cfg.timeoutMs = 20000;
  braidComm_t comm = nullptr;
  braidResult_t r = braidCommInitRankConfig(&comm, ctx.nranks, ctx.id, ctx.rank, &cfg);
  EXPECT_EQ(r, braidSuccess) << "init with BRAID_ALGO=" << algo << ": " << braidGetLastError(nullptr);
  return r == braidSuccess ? comm : nullptr;
}

class ForcedAlgorithm : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ForcedAlgorithm, Matrix) {
  const Forced& f = kAlgorithms[std::get<0>(GetParam())];
  const int n = std::get<1>(GetParam());
  const std::string algo = std::string(f.collective) + ":" + f.algorithm;
  RunOptions o;
  o.nranks = n;
  o.init = false;
  o.sharedBytes = 64;
  o.limitSeconds = 60;
  runRanks(o, [&](RankContext& ctx) {
    ctx.comm = initForced(ctx, algo);  // the harness destroys it after the body
    if (ctx.comm == nullptr) return;
    runInline(casesFor(f, n), ctx.comm, ctx.rank, n, ctx.shared);
  });
}

std::string paramName(const ::testing::TestParamInfo<std::tuple<int, int>>& p) {
  const Forced& f = kAlgorithms[std::get<0>(p.param)];
  return std::string(f.collective) + "_" + f.algorithm + "_N" + std::to_string(std::get<1>(p.param));
}

INSTANTIATE_TEST_SUITE_P(All, ForcedAlgorithm,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kAlgorithms))),
                                            ::testing::ValuesIn(kRankCounts)),
                         paramName);

// "BRAID_ALGO: no algorithm 'x' for allreduce (known: ring, rd, ...)": the
// library's own list, compared with kAlgorithms.
TEST(KnownAlgorithms, MatchRegistry) {
  RunOptions o;
  o.nranks = 1;
  o.init = false;
  o.limitSeconds = 30;
  runRanks(o, [](RankContext& ctx) {
    std::set<std::string> collectives;
    for (const Forced& f : kAlgorithms) collectives.insert(f.collective);
    for (const std::string& coll : collectives) {
      setenv("BRAID_ALGO", (coll + ":no-such-algorithm").c_str(), 1);
      braidComm_t comm = nullptr;
      braidResult_t r = braidCommInitRank(&comm, 1, ctx.id, 0);
      ASSERT_EQ(r, braidInvalidArgument) << coll;
      const std::string error = braidGetLastError(nullptr);
      const size_t open = error.find("(known: "), close = error.rfind(')');
      ASSERT_TRUE(open != std::string::npos && close != std::string::npos && close > open) << error;
      std::set<std::string> known, listed;
      std::stringstream names(error.substr(open + 8, close - open - 8));
      for (std::string name; std::getline(names, name, ',');) known.insert(name.substr(name.find_first_not_of(' ')));
      for (const Forced& f : kAlgorithms)
        if (coll == f.collective) listed.insert(f.algorithm);
      EXPECT_EQ(known, listed) << coll << ": the library knows other algorithms than this test runs";
    }
  });
}

}  // namespace
}  // namespace braid::itest

// The tuner: picks the model's minimum, caches per bucket, honours overrides
// and fixed chunks, falls back without a model; link settings from the
// environment; the prediction table at 1,024 and 16,384 ranks.
#include <cstdio>
#include <cstdlib>

#include "algorithms/tuner/tuner.h"
#include "model_helpers.h"

namespace braid::algo {
namespace {
using testing::fabric;

TunerConfig config(int nranks, int ranksPerHost = 1) {
  TunerConfig c;
  c.nranks = nranks;
  c.params = fabric(ranksPerHost);
  return c;
}

TEST(Tuner, Buckets) {
  EXPECT_EQ(Tuner::bucketOf(0), 0);
  EXPECT_EQ(Tuner::bucketOf(1), 0);
  EXPECT_EQ(Tuner::bucketOf(2), 1);
  EXPECT_EQ(Tuner::bucketOf(3), 2);
  EXPECT_EQ(Tuner::bucketOf(4), 2);
  EXPECT_EQ(Tuner::bucketOf(5), 3);
  EXPECT_EQ(Tuner::bucketBytes(Tuner::bucketOf(1000)), 1024u);
  EXPECT_EQ(Tuner::bucketBytes(Tuner::bucketOf(1024)), 1024u);
  EXPECT_EQ(Tuner::bucketBytes(Tuner::bucketOf(SIZE_MAX)), SIZE_MAX);
}

TEST(Tuner, PicksTheModelsMinimum) {
  for (int n : {4, 7, 64, 1024, 16384}) {
    Tuner tuner(config(n));
    AlgorithmOverrides none;
    for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                         Collective::kBroadcast, Collective::kReduce, Collective::kBarrier}) {
      for (size_t bytes : {size_t(8), size_t(1) << 16, size_t(1) << 20, size_t(1) << 30}) {
        if (c == Collective::kBarrier) bytes = 0;
        Pick p = tuner.pick(c, bytes, none);
        ModelQuery q{c, n, Tuner::bucketBytes(Tuner::bucketOf(bytes)), 4, 0};
        std::vector<Candidate> all = predictAll(q, fabric(), 0);
        ASSERT_FALSE(all.empty());
        ASSERT_NE(p.algorithm, nullptr);
        EXPECT_EQ(p.algorithm, all[0].algorithm) << collectiveName(c) << " n=" << n << " bytes=" << bytes;
        EXPECT_EQ(p.chunkBytes, all[0].chunkBytes);
        EXPECT_DOUBLE_EQ(p.seconds, all[0].seconds);
        EXPECT_STREQ(p.reason, "model");
        for (const Candidate& other : all) EXPECT_LE(p.seconds, other.seconds);
      }
    }
  }
}

// The binomial gather / scatter is ranked for blocks up to kRootedTreeBytes
// only (registry.h); linear above, and the fallback table agrees.
TEST(Tuner, TheRootedTreeIsRankedForSmallBlocksOnly) {
  for (Collective c : {Collective::kGather, Collective::kScatter}) {
    for (int n : {4, 64}) {
      auto names = [&](size_t bytes) {
        std::string out;
        for (const Candidate& k : predictAll(ModelQuery{c, n, bytes, 4, 0}, fabric(), 0))
          out += std::string(k.algorithm->name) + " ";
        return out;
      };
      EXPECT_NE(names(kRootedTreeBytes).find("binomial"), std::string::npos)
          << collectiveName(c) << " n=" << n;
      EXPECT_EQ(names(2 * kRootedTreeBytes), "linear ") << collectiveName(c) << " n=" << n;
      EXPECT_STREQ(fallbackAlgorithm(c, kRootedTreeBytes, n)->name, "binomial");
      EXPECT_STREQ(fallbackAlgorithm(c, kRootedTreeBytes + 1, n)->name, "linear");
    }
  }
}

TEST(Tuner, LatencyAndBandwidthRegimes) {
  Tuner tuner(config(64));
  AlgorithmOverrides none;
  EXPECT_STREQ(tuner.pick(Collective::kAllReduce, 8, none).algorithm->name, "rd");
  std::string large = tuner.pick(Collective::kAllReduce, size_t(1) << 30, none).algorithm->name;
  EXPECT_TRUE(large == "ring" || large == "rhd") << large;
}

TEST(Tuner, CachesPerCollectiveAndBucket) {
  Tuner tuner(config(8));
  AlgorithmOverrides none;
  EXPECT_EQ(tuner.cachedPicks(), 0u);
  Pick a = tuner.pick(Collective::kAllReduce, 3000, none);
  EXPECT_EQ(tuner.cachedPicks(), 1u);
  Pick b = tuner.pick(Collective::kAllReduce, 4096, none);  // same bucket (<= 4 KiB)
  EXPECT_EQ(tuner.cachedPicks(), 1u);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.seconds, b.seconds);
  tuner.pick(Collective::kAllReduce, 4097, none);
  EXPECT_EQ(tuner.cachedPicks(), 2u);
  tuner.pick(Collective::kAllGather, 4096, none);
  EXPECT_EQ(tuner.cachedPicks(), 3u);
}

TEST(Tuner, OverridesWinForTheirRangeOnly) {
  Tuner tuner(config(16));
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:0-64k:ring", &o).isOk());
  Pick forced = tuner.pick(Collective::kAllReduce, 8, o);
  EXPECT_STREQ(forced.algorithm->name, "ring");
  EXPECT_STREQ(forced.reason, "override");
  EXPECT_GT(forced.seconds, 0) << "a forced algorithm still gets the model's chunk and time";
  Pick tuned = tuner.pick(Collective::kAllReduce, 8, AlgorithmOverrides());
  EXPECT_STREQ(tuned.algorithm->name, "rd");
  Pick beyond = tuner.pick(Collective::kAllReduce, 1 << 20, o);
  EXPECT_STREQ(beyond.reason, "model");
}

TEST(Tuner, FixedChunkIsKept) {
  TunerConfig c = config(16);
  c.fixedChunkBytes = 48 << 10;
  Tuner tuner(c);
  Pick p = tuner.pick(Collective::kAllReduce, 64 << 20, AlgorithmOverrides());
  EXPECT_EQ(p.chunkBytes, size_t(48) << 10);
}

TEST(Tuner, FallsBackWithoutAModel) {
  TunerConfig c = config(4);
  c.modelEnabled = false;
  c.fallbackChunkBytes = 64 << 10;
  Tuner tuner(c);
  Pick p = tuner.pick(Collective::kAllReduce, 1 << 20, AlgorithmOverrides());
  EXPECT_STREQ(p.algorithm->name, "rhd");  // the fixed table: large, power of two
  EXPECT_STREQ(p.reason, "fallback");
  EXPECT_LT(p.seconds, 0);
  EXPECT_EQ(p.chunkBytes, size_t(64) << 10);
  // All-to-all-v has no sizes the model could use: the table decides.
  Tuner modelled(config(4));
  EXPECT_STREQ(modelled.pick(Collective::kAllToAllv, 100, AlgorithmOverrides()).algorithm->name, "pairwise");
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(LinkSettings, DefaultsAndEnvironment) {
  LinkSettings s;
  ASSERT_TRUE(linkSettingsFromEnvironment(&s).isOk());
  EXPECT_EQ(s.alphaUs, kLoopbackAlphaUs);
  EXPECT_TRUE(s.modelEnabled());
  {
    ScopedEnv a("BRAID_LINK_ALPHA_US", "5"), b("BRAID_LINK_BETA_GBPS", "12.5"), g("BRAID_REDUCE_GBPS", "10");
    ASSERT_TRUE(linkSettingsFromEnvironment(&s).isOk());
    CostParams p = s.costParams(8);
    EXPECT_DOUBLE_EQ(p.inter.alpha, 5e-6);
    EXPECT_DOUBLE_EQ(p.inter.beta, 1 / 12.5e9);
    EXPECT_DOUBLE_EQ(p.intra.alpha, kShmAlphaUs * 1e-6) << "shared memory keeps its own class";
    EXPECT_DOUBLE_EQ(p.intra.beta, 1 / (kShmGBps * 1e9));
    EXPECT_DOUBLE_EQ(p.gamma, 1e-10);
    EXPECT_EQ(p.ranksPerHost, 8);
    CostParams tcp = s.costParams(8, false);
    EXPECT_DOUBLE_EQ(tcp.intra.alpha, 5e-6) << "without shared memory a host's ranks use the network";
    EXPECT_DOUBLE_EQ(tcp.intra.beta, 1 / 12.5e9);
  }
  {
    ScopedEnv a("BRAID_LINK_INTRA_ALPHA_US", "0.5"), b("BRAID_LINK_INTRA_GBPS", "20");
    ASSERT_TRUE(linkSettingsFromEnvironment(&s).isOk());
    CostParams p = s.costParams(4);
    EXPECT_DOUBLE_EQ(p.intra.alpha, 0.5e-6);
    EXPECT_DOUBLE_EQ(p.intra.beta, 1 / 20e9);
  }
  {
    ScopedEnv b("BRAID_LINK_INTRA_GBPS", "0");
    EXPECT_EQ(linkSettingsFromEnvironment(&s).code(), Code::kInvalidArgument) << "shared memory has a rate";
  }
  {
    ScopedEnv b("BRAID_LINK_BETA_GBPS", "0");
    ASSERT_TRUE(linkSettingsFromEnvironment(&s).isOk());
    EXPECT_FALSE(s.modelEnabled());
  }
  for (const char* bad : {"fast", "-1", "1e999", "3x"}) {
    ScopedEnv a("BRAID_LINK_ALPHA_US", bad);
    Status st = linkSettingsFromEnvironment(&s);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("BRAID_LINK_ALPHA_US"), std::string::npos);
  }
  ScopedEnv r("BRAID_REDUCE_GBPS", "0");
  EXPECT_EQ(linkSettingsFromEnvironment(&s).code(), Code::kInvalidArgument);
}

// The table of the issue: 100 Gbit/s, 5 us links, reductions at 10 GB/s.
TEST(PredictionTable, LargeJobs) {
  CostParams p;
  p.intra = p.inter = {5e-6, 1 / 12.5e9};
  p.gamma = 1 / 10e9;
  std::string table = predictionTable(Collective::kAllReduce, {1024, 16384},
                                      {8, size_t(1) << 20, size_t(1) << 30}, p);
  std::printf("%s", table.c_str());
  EXPECT_NE(table.find("*rd"), std::string::npos) << "8 B is latency-bound";
  EXPECT_EQ(table.find("no algorithm"), std::string::npos);
}

// What the defaults choose on this machine's loopback TCP (for the record;
// it asserts only what is clear-cut).
TEST(PredictionTable, LoopbackDefaults) {
  CostParams p = LinkSettings().costParams(8);
  std::string table = "";
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kBroadcast})
    table += predictionTable(c, {2, 4, 8}, {8, size_t(64) << 10, size_t(1) << 20, size_t(64) << 20}, p);
  std::printf("%s", table.c_str());
  Tuner tuner(TunerConfig::make(4, 4, LinkSettings(), 0, 128 << 10));
  EXPECT_STREQ(tuner.pick(Collective::kAllReduce, 8, AlgorithmOverrides()).algorithm->name, "rd");
}

// Several ranks a host behind one network link: the hierarchical all-reduce
// sends 2 (H-1)/H of the vector through a host's link where the flat ring
// sends 2 (N-1)/N, and the tuner sees it once the model has both link
// classes and the shared NIC. 4 hosts x 2 ranks, the network at 1.5 GB/s
// (the default) and at 1 Gbit/s (the emulated fabric's).
TEST(Tuner, PicksTheHierarchyWhereHostsShareTheirLink) {
  for (double gbps : {kLoopbackGBps, 0.12}) {
    LinkSettings s;
    s.betaGBps = gbps;
    Tuner tuner(TunerConfig::make(8, 2, s, 0, 128 << 10));
    for (size_t bytes : {size_t(16) << 20, size_t(64) << 20})
      EXPECT_STREQ(tuner.pick(Collective::kAllReduce, bytes, AlgorithmOverrides()).algorithm->name,
                   "hierarchical")
          << gbps << " GB/s, " << bytes << " B";
    Tuner flat(TunerConfig::make(8, 1, s, 0, 128 << 10));
    EXPECT_STRNE(flat.pick(Collective::kAllReduce, 16 << 20, AlgorithmOverrides()).algorithm->name,
                 "hierarchical")
        << "one rank a host: the hierarchy is the leaders' ring, never ranked";
  }
}

// All-gather: the leaders' ring carries N - h blocks through a host's link
// where the flat ring carries N - 1 (measured on the 4x2 fabric: 1.10-1.16x).
// On one host it only adds a hop through the leader.
TEST(Tuner, PicksTheHierarchicalAllGatherWhereHostsShareTheirLink) {
  for (double gbps : {kLoopbackGBps, 0.12}) {
    LinkSettings s;
    s.betaGBps = gbps;
    Tuner tuner(TunerConfig::make(8, 2, s, 0, 128 << 10));
    for (size_t perRank : {size_t(128) << 10, size_t(2) << 20})
      EXPECT_STREQ(tuner.pick(Collective::kAllGather, perRank, AlgorithmOverrides()).algorithm->name,
                   "hierarchical")
          << gbps << " GB/s, " << perRank << " B a rank";
    Tuner oneHost(TunerConfig::make(4, 4, s, 0, 128 << 10));
    EXPECT_STRNE(oneHost.pick(Collective::kAllGather, 2 << 20, AlgorithmOverrides()).algorithm->name,
                 "hierarchical");
  }
}

}  // namespace
}  // namespace braid::algo

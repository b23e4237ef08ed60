// BRAID_ALGO parsing: per-collective names, size ranges, and clear errors.
#include <gtest/gtest.h>

#include <cstdint>

#include "algorithms/registry.h"

namespace braid::algo {
namespace {

const char* nameAt(const AlgorithmOverrides& o, Collective c, size_t bytes) {
  const Algorithm* a = o.forced(c, bytes);
  return a ? a->name : "(tuner)";
}

TEST(ParseSize, SuffixesAndLimits) {
  size_t v = 0;
  ASSERT_TRUE(parseSize("0", &v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(parseSize("123", &v));
  EXPECT_EQ(v, 123u);
  ASSERT_TRUE(parseSize("64k", &v));
  EXPECT_EQ(v, 64u << 10);
  ASSERT_TRUE(parseSize("64K", &v));
  EXPECT_EQ(v, 64u << 10);
  ASSERT_TRUE(parseSize("3m", &v));
  EXPECT_EQ(v, size_t(3) << 20);
  ASSERT_TRUE(parseSize("2G", &v));
  EXPECT_EQ(v, size_t(2) << 30);
  ASSERT_TRUE(parseSize(" inf ", &v));
  EXPECT_EQ(v, SIZE_MAX);
  ASSERT_TRUE(parseSize("INF", &v));
  EXPECT_EQ(v, SIZE_MAX);
  for (const char* bad : {"", "k", "-1", "1.5k", "12kb", "1t", "x", "18446744073709551616",
                          "99999999999999999999g", "17179869184g"})
    EXPECT_FALSE(parseSize(bad, &v)) << bad;
}

TEST(AlgorithmOverrides, EmptySpecForcesNothing) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("", &o).isOk());
  EXPECT_TRUE(o.empty());
  ASSERT_TRUE(AlgorithmOverrides::parse(" ; ;", &o).isOk());
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(o.forced(Collective::kAllReduce, 100), nullptr);
}

TEST(AlgorithmOverrides, WholeRangeNames) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:rhd;allgather:ring", &o).isOk());
  ASSERT_NE(o.forced(Collective::kAllReduce), nullptr);
  EXPECT_STREQ(o.forced(Collective::kAllReduce)->name, "rhd");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 0), "rhd");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, SIZE_MAX - 1), "rhd");
  EXPECT_STREQ(nameAt(o, Collective::kAllGather, 4096), "ring");
  EXPECT_EQ(o.forced(Collective::kBroadcast, 4096), nullptr);
  EXPECT_FALSE(o.empty());
}

TEST(AlgorithmOverrides, SizeRangesAreInclusiveExclusive) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:0-64k:rd,64k-inf:ring", &o).isOk());
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 0), "rd");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 65535), "rd");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 65536), "ring");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, size_t(1) << 40), "ring");
  EXPECT_EQ(o.forced(Collective::kAllReduce), nullptr) << "not one algorithm for every size";
  ASSERT_EQ(o.rules(Collective::kAllReduce).size(), 2u);
  EXPECT_EQ(o.rules(Collective::kAllReduce)[1].lo, 65536u);
  EXPECT_EQ(o.rules(Collective::kAllReduce)[1].hi, SIZE_MAX);
}

TEST(AlgorithmOverrides, UncoveredSizesGoToTheTuner) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:1k-2k:ring", &o).isOk());
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 1023), "(tuner)");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 1024), "ring");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 2047), "ring");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 2048), "(tuner)");
  EXPECT_EQ(o.forced(Collective::kAllReduce), nullptr);
}

TEST(AlgorithmOverrides, FirstMatchWinsAcrossItemsAndEntries) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:0-1m:ring,0-inf:rd", &o).isOk());
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 100), "ring");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 2 << 20), "rd");
  // A bare name covers whatever the ranges before it left.
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:0-4k:rd,rhd", &o).isOk());
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 10), "rd");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 8192), "rhd");
  // Entries for the same collective append in order.
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:0-4k:rd;allreduce:ring;allreduce:rhd", &o).isOk());
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 10), "rd");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 8192), "ring");
}

TEST(AlgorithmOverrides, WhitespaceAndCaseAreForgiven) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse(" AllReduce : 0 - 64K : RD , 64k-INF : Ring ; ", &o).isOk());
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 10), "rd");
  EXPECT_STREQ(nameAt(o, Collective::kAllReduce, 1 << 20), "ring");
}

TEST(AlgorithmOverrides, AllToAllSteersAllToAllv) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("alltoall:0-1k:pairwise", &o).isOk());
  EXPECT_STREQ(nameAt(o, Collective::kAllToAllv, 10), "pairwise");
  EXPECT_STREQ(nameAt(o, Collective::kAllToAllv, 4096), "(tuner)");
}

TEST(AlgorithmOverrides, MalformedSpecsAreClearErrors) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("broadcast:chain", &o).isOk());
  struct Bad {
    const char* spec;
    const char* mentions;
  };
  for (Bad b : {Bad{"allreduce:nosuch", "known: "}, Bad{"frobnicate:ring", "frobnicate"},
                Bad{"allreduce", "not collective:algorithm"}, Bad{"allreduce:", "names no algorithm"},
                Bad{"allreduce:64k:ring", "size range"}, Bad{"allreduce:a-b:ring", "size range"},
                Bad{"allreduce:1x-2k:ring", "size range"}, Bad{"allreduce:10-5:ring", "empty"},
                Bad{"allreduce:5-5:ring", "empty"}, Bad{"allreduce:0-64k:", "no algorithm ''"},
                Bad{"allreduce:0-64k:rd,64k-inf:nosuch", "nosuch"},
                Bad{"allreduce:99999999999999999999-inf:ring", "size range"}}) {
    Status st = AlgorithmOverrides::parse(b.spec, &o);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << b.spec;
    EXPECT_NE(st.message().find(b.mentions), std::string::npos) << b.spec << ": " << st.message();
  }
  // The unknown name's message lists what exists.
  Status st = AlgorithmOverrides::parse("allreduce:nosuch", &o);
  EXPECT_NE(st.message().find("ring"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("rd"), std::string::npos) << st.message();
  // A failed parse leaves the previous overrides alone.
  EXPECT_STREQ(nameAt(o, Collective::kBroadcast, 1), "chain");
}

TEST(SelectAlgorithm, OverrideThenFallbackTable) {
  AlgorithmOverrides o;
  ASSERT_TRUE(AlgorithmOverrides::parse("allreduce:0-1k:ring", &o).isOk());
  EXPECT_STREQ(selectAlgorithm(Collective::kAllReduce, 100, 4, o)->name, "ring");
  EXPECT_STREQ(selectAlgorithm(Collective::kAllReduce, 4096, 4, o)->name, "rd");
  EXPECT_STREQ(selectAlgorithm(Collective::kAllReduce, 1 << 20, 4, o)->name, "rhd");
  EXPECT_STREQ(selectAlgorithm(Collective::kAllReduce, 1 << 20, 3, o)->name, "ring");
  EXPECT_STREQ(selectAlgorithm(Collective::kBarrier, 0, 3, o)->name, "dissemination");
}

}  // namespace
}  // namespace braid::algo

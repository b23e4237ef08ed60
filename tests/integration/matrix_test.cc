// The correctness matrix (matrix.h) at every rank count, inline and on a stream.
//
// Split so that each test case stays short on 2 cores (8 ranks oversubscribe
// them 4x): Matrix.Small/N<n> runs counts 0, 1, 7 and 4099 for all 12 dtypes x
// 5 ops; Matrix.Big/N<n>_<group> runs 1<<20 (per block: 1<<20 / n) for all ops
// and one group of 4 dtypes, so every dtype gets the large count at every n.
// The stream run uses MatrixOptions' representative 1<<20 subset.
#include "matrix.h"

#include <braid/braid.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "harness.h"

namespace braid::itest {
namespace {

const int kRankCounts[] = {1, 2, 3, 4, 5, 7, 8};

void runMatrixInline(int n, const MatrixOptions& m) {
  RunOptions o;
  o.nranks = n;
  o.sharedBytes = 64;
  o.limitSeconds = 90;
  runRanks(o, [n, &m](RankContext& ctx) { runInline(buildMatrix(n, m), ctx.comm, ctx.rank, n, ctx.shared); });
}

class MatrixSmall : public ::testing::TestWithParam<int> {};

TEST_P(MatrixSmall, Inline) {
  MatrixOptions m;
  m.bigCount = 0;
  runMatrixInline(GetParam(), m);
}

INSTANTIATE_TEST_SUITE_P(Ranks, MatrixSmall, ::testing::ValuesIn(kRankCounts),
                         [](const ::testing::TestParamInfo<int>& p) {
                           std::string name = std::to_string(p.param);  // not "N" + ..., which trips
                           return name.insert(0, 1, 'N');               // GCC 12's -Wrestrict false positive
                         });

struct TypeGroup {
  const char* name;
  std::vector<braidDataType_t> types;
};
const TypeGroup kTypeGroups[] = {
    {"narrow_ints", {braidInt8, braidUint8, braidInt32, braidUint32}},
    {"wide", {braidInt64, braidUint64, braidFloat32, braidFloat64}},
    {"low_precision", {braidFloat16, braidBfloat16, braidFloat8e4m3, braidFloat8e5m2}},
};

class MatrixBig : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(MatrixBig, Inline) {
  MatrixOptions m;
  m.counts = {};
  m.bigTypes = kTypeGroups[std::get<1>(GetParam())].types;
  runMatrixInline(std::get<0>(GetParam()), m);
}

INSTANTIATE_TEST_SUITE_P(Ranks, MatrixBig,
                         ::testing::Combine(::testing::ValuesIn(kRankCounts), ::testing::Values(0, 1, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& p) {
                           std::string name = std::to_string(std::get<0>(p.param));
                           name.insert(0, 1, 'N');
                           return name.append("_").append(kTypeGroups[std::get<1>(p.param)].name);
                         });

// Large messages over shm are pulled single-copy (CMA) by default; the ring
// carries them where the kernel refuses, so the big matrix runs once over the
// ring alone too.
TEST(MatrixBigRingOnly, ThreeRanks) {
  MatrixOptions m;
  m.counts = {};
  m.bigTypes = kTypeGroups[1].types;
  setenv("BRAID_SHM_CMA_THRESHOLD", "0", 1);  // read at init by the forked ranks
  runMatrixInline(3, m);
  unsetenv("BRAID_SHM_CMA_THRESHOLD");
}

// Buffers from braidMemAlloc, which the peers on the host read through
// mappings of them (pulled slot calls, large shm messages, and chunked slot
// calls past their first piece where every rank's buffers are such memory):
// on every rank of 3, and on rank 1 of 4 ranks only (its peers read it
// through a mapping, it reads them with process_vm_readv, and chunked calls
// stay in chunks), the small counts and one large group of dtypes.
class MatrixShareable : public ::testing::TestWithParam<std::tuple<int, uint64_t>> {};

TEST_P(MatrixShareable, Inline) {
  MatrixOptions m;
  m.bigTypes = kTypeGroups[1].types;
  m.shareableRanks = std::get<1>(GetParam());
  runMatrixInline(std::get<0>(GetParam()), m);
}

INSTANTIATE_TEST_SUITE_P(Ranks, MatrixShareable,
                         ::testing::Values(std::make_tuple(3, uint64_t{0x7}),
                                           std::make_tuple(4, uint64_t{0x2})),
                         [](const ::testing::TestParamInfo<std::tuple<int, uint64_t>>& p) {
                           std::string name = std::to_string(std::get<0>(p.param));
                           name.insert(0, 1, 'N');
                           return name.append(std::get<1>(p.param) == 0x7 ? "_all" : "_rank1");
                         });

// The same matrix through a braidStream_t with events, once, at 4 ranks.
TEST(MatrixStream, FourRanks) {
  RunOptions o;
  o.nranks = 4;
  o.sharedBytes = 64;
  o.limitSeconds = 150;
  runRanks(o, [](RankContext& ctx) {
    runOnStream(buildMatrix(4, MatrixOptions{}), ctx.comm, ctx.rank, 4, ctx.shared, 16);
  });
}

// The header's in-place rule ("send == recv") read for all-to-all; the
// implementation currently refuses it as an overlap. Kept apart so that the
// main matrix runs either way.
// "All-to-all(v) has no in-place form. Any other overlap of send and recv is
// InvalidArgument": refused before anything is sent, buffer untouched.
TEST(MatrixAllToAll, InPlaceIsRefused) {
  RunOptions o;
  o.nranks = 3;
  o.limitSeconds = 30;
  runRanks(o, [](RankContext& ctx) {
    int32_t buf[6] = {1, 2, 3, 4, 5, 6};
    braidResult_t r = braidAllToAll(buf, buf, 2, braidInt32, ctx.comm, nullptr);
    EXPECT_EQ(r, braidInvalidArgument);
    EXPECT_NE(std::string(braidGetLastError(ctx.comm)).find("in-place"), std::string::npos)
        << braidGetLastError(ctx.comm);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(buf[i], i + 1);
    int32_t in = ctx.rank, out[3] = {};
    ASSERT_EQ(braidAllGather(&in, out, 1, braidInt32, ctx.comm, nullptr), braidSuccess);
    for (int p = 0; p < 3; ++p) EXPECT_EQ(out[p], p);
  });
}

// "recvbuff is written on root only (it may be NULL elsewhere)."
TEST(MatrixReduce, NullRecvOnNonRoots) {
  RunOptions o;
  o.nranks = 3;
  o.limitSeconds = 30;
  runRanks(o, [](RankContext& ctx) {
    for (int root = 0; root < 3; ++root) {
      double in[9], out[9] = {};
      for (int i = 0; i < 9; ++i) in[i] = i + 0.25 * ctx.rank;
      braidResult_t r = braidReduce(in, ctx.rank == root ? out : nullptr, 9, braidFloat64, braidSum, root,
                                    ctx.comm, nullptr);
      ASSERT_EQ(r, braidSuccess) << "root " << root << ": " << braidGetLastError(ctx.comm);
      if (ctx.rank != root) continue;
      for (int i = 0; i < 9; ++i) EXPECT_EQ(out[i], 3 * i + 0.75) << "root " << root << ", element " << i;
    }
  });
}

// The case list is the same on every rank and covers what the header lists.
TEST(MatrixShape, Covered) {
  for (int n : {1, 2, 3, 8}) {
    auto cases = buildMatrix(n, MatrixOptions{});
    EXPECT_EQ(cases.size(), buildMatrix(n, MatrixOptions{}).size());
    size_t reduceRoots = 0, a2avZero = 0;
    for (const Case& c : cases) {
      if (c.coll == Coll::kReduce && c.count == 7 && c.type == braidFloat16 && c.op == braidAvg && !c.inPlace)
        ++reduceRoots;
      if (c.coll == Coll::kAllToAllv && c.count == 0) ++a2avZero;
    }
    EXPECT_EQ(reduceRoots, static_cast<size_t>(n)) << "every root at small counts";
    EXPECT_EQ(a2avZero, static_cast<size_t>(braidNumTypes));
    MatrixOptions small;
    small.bigCount = 0;
    size_t zeroCountTypes = 0;
    for (const Case& c : buildMatrix(n, small))
      if (c.coll == Coll::kAllReduce && c.count == 0 && c.op == braidSum && !c.inPlace) ++zeroCountTypes;
    EXPECT_EQ(zeroCountTypes, static_cast<size_t>(braidNumTypes)) << "count 0 for every dtype";
  }
}

}  // namespace
}  // namespace braid::itest

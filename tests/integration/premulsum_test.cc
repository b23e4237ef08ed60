// PreMulSum as frameworks use it: each rank's gradient scaled by a fraction
// inside the all-reduce, on the paths a call can take (shared slots for small
// calls, an algorithm over the transport when one is forced), and ops that
// belong to one communicator only. The correctness matrix (matrix.cc) covers
// every collective x dtype x rank count with integer scalars.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "harness.h"

namespace braid::itest {
namespace {

// Rank r's scalar: 2^-(r + 1), so every product and sum below is exact.
float scalarOf(int rank) { return 1.0f / static_cast<float>(2 << rank); }

void expectScaledSums(braidComm_t comm, int rank, int nranks, size_t count, braidStream_t stream) {
  float k = scalarOf(rank);
  braidRedOp_t op;
  ASSERT_EQ(braidRedOpCreatePreMulSum(&op, &k, braidFloat32, braidScalarHostImmediate, comm), braidSuccess)
      << braidGetLastError(comm);
  std::vector<float> in(count), out(count, -1), reduced(count, -1);
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(i % 64 + 8 * rank);
  ASSERT_EQ(braidAllReduce(in.data(), out.data(), count, braidFloat32, op, comm, stream), braidSuccess)
      << braidGetLastError(comm);
  ASSERT_EQ(braidReduce(in.data(), reduced.data(), count, braidFloat32, op, nranks - 1, comm, stream),
            braidSuccess)
      << braidGetLastError(comm);
  // Destroyed before a queued call ran: the call keeps the scalar it was given.
  ASSERT_EQ(braidRedOpDestroy(op, comm), braidSuccess);
  if (stream) {
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(comm);
  }
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < nranks; ++r) want += static_cast<float>(i % 64 + 8 * r) * scalarOf(r);
    ASSERT_EQ(out[i], want) << "all-reduce, count " << count << ", element " << i;
    if (rank == nranks - 1) {
      ASSERT_EQ(reduced[i], want) << "reduce, count " << count << ", element " << i;
    }
  }
  EXPECT_EQ(in[0], static_cast<float>(8 * rank)) << "the input was scaled in place";
}

void runScaledSums(RankContext& ctx) {
  braidStream_t stream = nullptr;
  ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
  for (size_t count : {size_t{1}, size_t{1000}, size_t{300000}}) {
    expectScaledSums(ctx.comm, ctx.rank, ctx.nranks, count, nullptr);
    expectScaledSums(ctx.comm, ctx.rank, ctx.nranks, count, stream);
  }
  EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
}

TEST(PreMulSum, ScalesEachRanksInputByItsOwnFraction) {
  RunOptions o;
  o.nranks = 3;
  runRanks(o, runScaledSums);
}

TEST(PreMulSum, ScalesEachRanksInputOverTheRingOnTcp) {
  setenv("BRAID_TRANSPORT", "tcp", 1);
  setenv("BRAID_ALGO", "allreduce:ring;reduce:chain", 1);
  RunOptions o;
  o.nranks = 3;
  runRanks(o, runScaledSums);
  unsetenv("BRAID_TRANSPORT");
  unsetenv("BRAID_ALGO");
}

TEST(PreMulSum, AnOpBelongsToTheCommunicatorThatMadeIt) {
  RunOptions o;
  o.nranks = 2;
  runRanks(o, [](RankContext& ctx) {
    braidComm_t child = nullptr;
    ASSERT_EQ(braidCommSplit(ctx.comm, 0, ctx.rank, &child), braidSuccess) << braidGetLastError(ctx.comm);
    float k = 0.5f, x = 1, y = 0;
    braidRedOp_t op;
    ASSERT_EQ(braidRedOpCreatePreMulSum(&op, &k, braidFloat32, braidScalarHostImmediate, ctx.comm),
              braidSuccess);
    EXPECT_EQ(braidAllReduce(&x, &y, 1, braidFloat32, op, child, nullptr), braidInvalidArgument);
    EXPECT_EQ(y, 0.0f);
    EXPECT_EQ(braidRedOpDestroy(op, child), braidInvalidArgument);
    EXPECT_EQ(braidAllReduce(&x, &y, 1, braidFloat32, op, ctx.comm, nullptr), braidSuccess);
    EXPECT_EQ(y, 1.0f);  // 0.5 + 0.5
    EXPECT_EQ(braidRedOpDestroy(op, ctx.comm), braidSuccess);
    EXPECT_EQ(braidCommDestroy(child), braidSuccess);
  });
}

}  // namespace
}  // namespace braid::itest

// braidCommSplit and braidCommShrink: new communicators that compute correctly,
// including the survivors of a rank that died.
#include <gtest/gtest.h>

#include <semaphore.h>
#include <unistd.h>

#include <cerrno>

#include "harness.h"

namespace braid::itest {
namespace {

// Sum of (rank + 1) over the given parent ranks, through an all-reduce on comm.
void expectSumOver(braidComm_t comm, int mine, int expected) {
  int32_t v = mine, out = 0;
  ASSERT_EQ(braidAllReduce(&v, &out, 1, braidInt32, braidSum, comm, nullptr), braidSuccess) << braidGetLastError(comm);
  EXPECT_EQ(out, expected);
}

TEST(CommSplit, ColorsFormCommunicatorsOrderedByKey) {
  RunOptions o;
  o.nranks = 5;
  o.limitSeconds = 30;
  runRanks(o, [](RankContext& ctx) {
    // Ranks 0, 2 form one group (reversed by key), 1, 3 another; 4 joins none.
    const int color = ctx.rank == 4 ? BRAID_SPLIT_NOCOLOR : ctx.rank % 2;
    braidComm_t sub = reinterpret_cast<braidComm_t>(0x1);
    ASSERT_EQ(braidCommSplit(ctx.comm, color, -ctx.rank, &sub), braidSuccess) << braidGetLastError(ctx.comm);
    if (ctx.rank == 4) {
      EXPECT_EQ(sub, nullptr);
    } else {
      ASSERT_NE(sub, nullptr);
      int n = 0, r = -1;
      ASSERT_EQ(braidCommCount(sub, &n), braidSuccess);
      ASSERT_EQ(braidCommUserRank(sub, &r), braidSuccess);
      EXPECT_EQ(n, 2);
      EXPECT_EQ(r, ctx.rank < 2 ? 1 : 0);  // higher parent rank, lower key: first
      expectSumOver(sub, ctx.rank + 1, ctx.rank % 2 == 0 ? 1 + 3 : 2 + 4);
      EXPECT_EQ(braidCommDestroy(sub), braidSuccess);
    }
    // The parent still works.
    expectSumOver(ctx.comm, ctx.rank + 1, 15);
    braidComm_t unused;
    EXPECT_EQ(braidCommSplit(ctx.comm, -5, 0, &unused), braidInvalidArgument);
    EXPECT_EQ(braidCommSplit(ctx.comm, 0, 0, nullptr), braidInvalidArgument);
  });
}

TEST(CommShrink, SurvivorsOfADeadRankComputeAgain) {
  RunOptions o;
  o.nranks = 4;
  o.limitSeconds = 40;
  o.braidTimeoutMs = 10000;
  // Rank 3 may finish the first all-reduce before the others do; dying then
  // would (rightly) fail their first all-reduce too. The survivors post once
  // they hold its result, and rank 3 dies only after all three posts.
  o.sharedBytes = sizeof(sem_t);
  o.initShared = [](void* shared) { ASSERT_EQ(sem_init(static_cast<sem_t*>(shared), 1, 0), 0); };
  runRanks(o, [](RankContext& ctx) {
    auto* firstDone = static_cast<sem_t*>(ctx.shared);
    expectSumOver(ctx.comm, ctx.rank + 1, 10);
    if (ctx.rank == 3) {
      for (int i = 0; i < 3; ++i) {
        while (sem_wait(firstDone) != 0) ASSERT_EQ(errno, EINTR);
      }
      _exit(0);  // dies without a word: its sockets close
    }
    ASSERT_EQ(sem_post(firstDone), 0);
    int32_t v = 1, out = 0;
    braidResult_t r = braidAllReduce(&v, &out, 1, braidInt32, braidSum, ctx.comm, nullptr);
    EXPECT_EQ(r, braidRemoteError) << braidGetLastError(ctx.comm);
    const int dead[] = {3};
    braidComm_t survivors = nullptr;
    ASSERT_EQ(braidCommShrink(ctx.comm, dead, 1, &survivors), braidSuccess) << braidGetLastError(ctx.comm);
    int n = 0, me = -1;
    ASSERT_EQ(braidCommCount(survivors, &n), braidSuccess);
    ASSERT_EQ(braidCommUserRank(survivors, &me), braidSuccess);
    EXPECT_EQ(n, 3);
    EXPECT_EQ(me, ctx.rank);
    expectSumOver(survivors, ctx.rank + 1, 6);
    EXPECT_EQ(braidCommDestroy(survivors), braidSuccess);
    const int self[] = {ctx.rank};
    braidComm_t none;
    EXPECT_EQ(braidCommShrink(ctx.comm, self, 1, &none), braidInvalidArgument);
  });
}

}  // namespace
}  // namespace braid::itest

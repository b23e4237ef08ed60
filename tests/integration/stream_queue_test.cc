// A braid stream's queue is bounded (Stream::Limits): a caller that fills it
// waits for room, but only while the stream's worker runs. These tests hold
// both halves at the API: a program whose ranks order calls on two
// communicators differently, valid with an unbounded queue, still completes,
// and a long burst computes correctly through the bound.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <vector>

#include "harness.h"

namespace braid::itest {
namespace {

// More than the queue's bound of 1024, so that rank 0's caller fills it.
constexpr int kCalls = 3000;

// Rank 0 queues its all-reduces on comm, then joins a barrier on a second
// communicator; rank 1 joins that barrier first and queues its all-reduces
// after. Rank 0's queued all-reduces wait for rank 1, which waits for rank
// 0's barrier: had rank 0's caller waited for room for good, neither would
// move.
TEST(StreamQueue, CallsQueuedPastTheBoundDoNotWaitForAPeerThisCallerHolds) {
  RunOptions o;
  o.nranks = 2;
  o.limitSeconds = 60;
  runRanks(o, [](RankContext& ctx) {
    braidComm_t other = nullptr;
    ASSERT_EQ(braidCommSplit(ctx.comm, 0, ctx.rank, &other), braidSuccess) << braidGetLastError(ctx.comm);
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    std::vector<int32_t> in(kCalls), out(kCalls, -1);
    for (int c = 0; c < kCalls; ++c) in[c] = c * 3 + ctx.rank;
    auto queueAll = [&] {
      for (int c = 0; c < kCalls; ++c)
        ASSERT_EQ(braidAllReduce(&in[c], &out[c], 1, braidInt32, braidSum, ctx.comm, stream), braidSuccess)
            << braidGetLastError(ctx.comm);
    };
    if (ctx.rank == 0) queueAll();
    ASSERT_EQ(braidBarrier(other, nullptr), braidSuccess) << braidGetLastError(other);
    if (ctx.rank == 1) queueAll();
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(ctx.comm);
    for (int c = 0; c < kCalls; ++c) ASSERT_EQ(out[c], 2 * c * 3 + 1) << "call " << c;
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
    EXPECT_EQ(braidCommDestroy(other), braidSuccess);
  });
}

// Every rank queues far past the bound, each call reading the one before's
// output: callers wait for room many times over, and nothing is lost,
// reordered or run twice.
TEST(StreamQueue, ChainedCallsThroughTheBoundStayInOrder) {
  RunOptions o;
  o.nranks = 3;
  o.limitSeconds = 60;
  runRanks(o, [](RankContext& ctx) {
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    // Call c sums value[c] into value[c + 1]: value[c + 1] = 3 * value[c]
    // (mod 2^32) only if call c - 1 ran before it.
    std::vector<uint32_t> value(kCalls + 1, 0);
    value[0] = 1;
    for (int c = 0; c < kCalls; ++c)
      ASSERT_EQ(braidAllReduce(&value[c], &value[c + 1], 1, braidUint32, braidSum, ctx.comm, stream),
                braidSuccess)
          << braidGetLastError(ctx.comm);
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(ctx.comm);
    uint32_t expected = 1;
    for (int c = 1; c <= kCalls; ++c) {
      expected *= 3;
      ASSERT_EQ(value[c], expected) << "after call " << c - 1;
    }
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
  });
}

}  // namespace
}  // namespace braid::itest

// braidCommFinalize: what a rank queued completes, nothing queued after it
// runs, and braidCommDestroy follows (the harness destroys the communicator).
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"

namespace braid::itest {
namespace {

TEST(Finalize, CompletesQueuedWorkThenRefusesNewWork) {
  RunOptions o;
  o.nranks = 3;
  runRanks(o, [](RankContext& ctx) {
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    constexpr int kCalls = 8;
    constexpr size_t kCount = 4099;
    std::vector<std::vector<float>> in(kCalls, std::vector<float>(kCount)), out(in);
    for (int c = 0; c < kCalls; ++c) {
      for (size_t i = 0; i < kCount; ++i) in[c][i] = static_cast<float>(ctx.rank + c + i % 7);
      ASSERT_EQ(braidAllReduce(in[c].data(), out[c].data(), kCount, braidFloat32, braidSum, ctx.comm, stream),
                braidSuccess)
          << braidGetLastError(ctx.comm);
    }
    // No synchronize: finalize itself waits for what the stream holds.
    ASSERT_EQ(braidCommFinalize(ctx.comm), braidSuccess) << braidGetLastError(ctx.comm);
    for (int c = 0; c < kCalls; ++c)
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(out[c][i], static_cast<float>(3 * (c + i % 7) + 0 + 1 + 2))
            << "call " << c << " element " << i;

    float x = 1, y = 0;
    EXPECT_EQ(braidAllReduce(&x, &y, 1, braidFloat32, braidSum, ctx.comm, nullptr), braidInvalidUsage);
    EXPECT_NE(std::string(braidGetLastError(ctx.comm)).find("finalized"), std::string::npos)
        << braidGetLastError(ctx.comm);
    EXPECT_EQ(y, 0.0f) << "a refused call wrote its output";
    EXPECT_EQ(braidCommFinalize(ctx.comm), braidSuccess) << "a second finalize";
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
  });
}

TEST(Finalize, RefusesANullCommunicator) { EXPECT_EQ(braidCommFinalize(nullptr), braidInvalidArgument); }

}  // namespace
}  // namespace braid::itest

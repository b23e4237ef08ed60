// The core correctness matrix over the ibverbs transport (transport_matrix.h).
// This machine has no RDMA device, so the ranks' transports open the tests'
// fake libibverbs (tests/unit/transports/fake_verbs) with its fabric in shared
// memory: one RDMA fabric across the rank processes, data moved between them
// by process_vm_readv / writev. On an RDMA host the same test runs over the
// real libibverbs when BRAID_IB_LIBRARY is left unset outside.
#include <braid/braid.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.h"
#include "tests/common/fake_verbs_count.h"
#include "transport_matrix.h"

namespace braid::itest {
namespace {

class IbVerbs : public ::testing::TestWithParam<TransportShape> {
 protected:
  // A fabric of its own for each run; its shared memory goes when the run ends.
  void run(const MatrixOptions& m, const char* maxMessageBytes = nullptr, bool roce = false) {
    static std::atomic<int> runs{0};
    const std::string fabric = "/braid-fake-verbs-" + std::to_string(getpid()) + "-" + std::to_string(runs++);
    runMatrixOver("ibverbs", GetParam(), m, [&](int) {
      setenv("BRAID_IB_LIBRARY", BRAID_FAKE_VERBS_PATH, 1);
      setenv("BRAID_FAKE_VERBS_FABRIC", fabric.c_str(), 1);
      setenv("BRAID_SOCKET_IFNAME", "lo", 1);
      if (maxMessageBytes) setenv("BRAID_MAX_MESSAGE_BYTES", maxMessageBytes, 1);
      if (roce) {
        setenv("BRAID_FAKE_VERBS_LINK", "ethernet", 1);
        setenv("BRAID_IB_TC", "106", 1);  // DSCP 26, a usual lossless class
      }
    });
    shm_unlink(fabric.c_str());
  }
};

// Counts 0, 1, 7 and 4099 for every dtype x op x collective, in and out of place.
TEST_P(IbVerbs, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  run(m);
}

// The large count (many chunks, writes longer than the fake port's 256 KiB
// limit) for the representative subset.
TEST_P(IbVerbs, Big) {
  MatrixOptions m;
  m.counts = {};
  run(m);
}

// Transfers over BRAID_MAX_MESSAGE_BYTES go as several messages, cut alike at
// both ends (shm too, between the pretend hosts' own ranks). The transport's
// own limit (4 GiB - 1) would take buffers a test cannot spare; 4 KiB cuts
// every 4099-element case into pieces, the last one short.
TEST_P(IbVerbs, SmallInMessagesOf4KiB) {
  MatrixOptions m;
  m.bigCount = 0;
  run(m, "4096");
}

// The same over RoCE ports: queue pairs addressed by GID through a global
// route header carrying BRAID_IB_TC (the fake refuses any other route).
TEST_P(IbVerbs, SmallOverRoCE) {
  MatrixOptions m;
  m.bigCount = 0;
  run(m, nullptr, true);
}

INSTANTIATE_TEST_SUITE_P(Shapes, IbVerbs, ::testing::Values(TransportShape{3, 0}, TransportShape{4, 2}),
                         [](const auto& p) { return shapeName("ibverbs", p.param); });

uint64_t registrations() { return test::fakeVerbsRegistrations(BRAID_FAKE_VERBS_PATH); }

// A communicator of the harness's ranks with every pair on ibverbs over the
// fake fabric `fabric`.
void initOverFakeVerbs(RankContext& ctx, const std::string& fabric) {
  setenv("BRAID_IB_LIBRARY", BRAID_FAKE_VERBS_PATH, 1);
  setenv("BRAID_FAKE_VERBS_FABRIC", fabric.c_str(), 1);
  setenv("BRAID_SOCKET_IFNAME", "lo", 1);
  setenv("BRAID_TRANSPORT", "ibverbs", 1);
  braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
  cfg.timeoutMs = 30000;
  ASSERT_EQ(braidCommInitRankConfig(&ctx.comm, ctx.nranks, ctx.id, ctx.rank, &cfg), braidSuccess)
      << braidGetLastError(nullptr);
}

// braidCommRegister as a training loop uses it: the buffers registered once,
// then many calls. Registered, neither an all-gather (every message between
// the users' buffers) nor an all-reduce (whose receives that reduce land in
// braid's staging, registered when it was made) registers anything per
// message; unregistered, each message into or out of a user buffer does.
// Deregistered, the calls go on as before.
TEST(IbVerbsRegistered, CallsOverRegisteredBuffersRegisterNothingPerMessage) {
  RunOptions o;
  o.nranks = 3;
  o.init = false;
  o.limitSeconds = 60;
  const std::string fabric = "/braid-fake-verbs-" + std::to_string(getpid()) + "-registered";
  runRanks(o, [&](RankContext& ctx) {
    ASSERT_NO_FATAL_FAILURE(initOverFakeVerbs(ctx, fabric));
    constexpr size_t kCount = 64 << 10;  // floats a rank: 256 KiB, past the 8 KiB bounce slots
    constexpr int kCalls = 4;
    std::vector<float> mine(kCount), all(kCount * ctx.nranks), sum(kCount * ctx.nranks);
    for (size_t i = 0; i < kCount; ++i) mine[i] = static_cast<float>(ctx.rank * 1000 + i % 997);
    auto allGathers = [&] {
      for (int call = 0; call < kCalls; ++call) {
        std::fill(all.begin(), all.end(), -1.0f);
        ASSERT_EQ(braidAllGather(mine.data(), all.data(), kCount, braidFloat32, ctx.comm, nullptr),
                  braidSuccess)
            << braidGetLastError(ctx.comm);
        for (int r = 0; r < ctx.nranks; ++r)
          for (size_t i = 0; i < kCount; i += 101)
            ASSERT_EQ(all[r * kCount + i], static_cast<float>(r * 1000 + i % 997))
                << "rank " << r << " i " << i;
      }
    };
    auto allReduces = [&] {
      for (int call = 0; call < kCalls; ++call) {
        ASSERT_EQ(
            braidAllReduce(all.data(), sum.data(), all.size(), braidFloat32, braidSum, ctx.comm, nullptr),
            braidSuccess)
            << braidGetLastError(ctx.comm);
        for (size_t i = 0; i < sum.size(); i += 89)
          ASSERT_EQ(sum[i], 3.0f * all[i]) << i;  // every rank gathered the same
      }
    };
    ASSERT_NO_FATAL_FAILURE(allGathers());  // plans made, staging made, connections warm
    ASSERT_NO_FATAL_FAILURE(allReduces());
    uint64_t before = registrations();
    ASSERT_NO_FATAL_FAILURE(allGathers());
    const uint64_t gatherUnregistered = registrations() - before;
    before = registrations();
    ASSERT_NO_FATAL_FAILURE(allReduces());
    const uint64_t reduceUnregistered = registrations() - before;

    void *hMine = nullptr, *hAll = nullptr, *hSum = nullptr;
    ASSERT_EQ(braidCommRegister(ctx.comm, mine.data(), mine.size() * sizeof(float), &hMine), braidSuccess)
        << braidGetLastError(ctx.comm);
    ASSERT_EQ(braidCommRegister(ctx.comm, all.data(), all.size() * sizeof(float), &hAll), braidSuccess);
    ASSERT_EQ(braidCommRegister(ctx.comm, sum.data(), sum.size() * sizeof(float), &hSum), braidSuccess);
    before = registrations();
    ASSERT_NO_FATAL_FAILURE(allGathers());
    const uint64_t gatherRegistered = registrations() - before;
    before = registrations();
    ASSERT_NO_FATAL_FAILURE(allReduces());
    const uint64_t reduceRegistered = registrations() - before;
    EXPECT_GT(gatherUnregistered, 0u);
    EXPECT_EQ(gatherRegistered, 0u);
    EXPECT_GT(reduceUnregistered, 0u);
    EXPECT_EQ(reduceRegistered, 0u);

    EXPECT_EQ(braidCommDeregister(ctx.comm, hMine), braidSuccess);
    EXPECT_EQ(braidCommDeregister(ctx.comm, hAll), braidSuccess);
    EXPECT_EQ(braidCommDeregister(ctx.comm, hSum), braidSuccess);
    before = registrations();
    ASSERT_NO_FATAL_FAILURE(allGathers());
    EXPECT_EQ(registrations() - before, gatherUnregistered);
  });
  shm_unlink(fabric.c_str());
}

// Registering and deregistering from one thread while ops run on a stream's
// worker (a framework registering its next buckets mid-step): every op
// returns the right data, whether its buffer was registered when it ran or
// not (under TSan: the table an op reads is never written under it).
TEST(IbVerbsRegistered, RegisteringWhileOpsRunOnAStream) {
  RunOptions o;
  o.nranks = 2;
  o.init = false;
  o.limitSeconds = 60;
  const std::string fabric = "/braid-fake-verbs-" + std::to_string(getpid()) + "-concurrent";
  runRanks(o, [&](RankContext& ctx) {
    ASSERT_NO_FATAL_FAILURE(initOverFakeVerbs(ctx, fabric));
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    constexpr size_t kCount = 16 << 10;  // 64 KiB a rank
    constexpr int kCalls = 24;
    std::vector<std::vector<int32_t>> in(kCalls, std::vector<int32_t>(kCount)),
        out(kCalls, std::vector<int32_t>(kCount * ctx.nranks, -1));
    for (int c = 0; c < kCalls; ++c)
      for (size_t i = 0; i < kCount; ++i) in[c][i] = static_cast<int32_t>(c * 100000 + ctx.rank * 50000 + i);
    for (int c = 0; c < kCalls; ++c)
      ASSERT_EQ(braidAllGather(in[c].data(), out[c].data(), kCount, braidInt32, ctx.comm, stream),
                braidSuccess);
    // Meanwhile: register each call's buffers, then deregister every other one.
    std::vector<void*> handles;
    for (int c = 0; c < kCalls; ++c) {
      void* h = nullptr;
      ASSERT_EQ(braidCommRegister(ctx.comm, out[c].data(), out[c].size() * sizeof(int32_t), &h),
                braidSuccess);
      handles.push_back(h);
      if (c % 2 == 1) {
        ASSERT_EQ(braidCommDeregister(ctx.comm, handles[c - 1]), braidSuccess);
        handles[c - 1] = nullptr;
      }
    }
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(ctx.comm);
    for (int c = 0; c < kCalls; ++c)
      for (int r = 0; r < ctx.nranks; ++r)
        for (size_t i = 0; i < kCount; i += 37)
          ASSERT_EQ(out[c][r * kCount + i], static_cast<int32_t>(c * 100000 + r * 50000 + i))
              << "call " << c << " rank " << r << " i " << i;
    for (void* h : handles) {
      if (h) {
        EXPECT_EQ(braidCommDeregister(ctx.comm, h), braidSuccess);
      }
    }
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
  });
  shm_unlink(fabric.c_str());
}

}  // namespace
}  // namespace braid::itest

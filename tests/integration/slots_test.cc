// Shared slots (core/host_slots.h) in real processes: when every rank is on
// one host, small calls run whole on them (the flight recorder names
// "shm-slots") and larger ones in chunks ("shm-slots-chunked"), also past a
// slot's size (BRAID_SHM_SLOT_BYTES=4096 below), their outputs written
// streaming or not (BRAID_SHM_STREAM_BYTES), large all-to-alls pulled
// ("shm-slots-pulled", BRAID_SHM_PULL_BYTES); forcing TCP, pretend
// hosts, BRAID_SHM_SLOT_BYTES=0 or a forced algorithm keep them off; a bad
// BRAID_SHM_SLOT_BYTES fails init clearly. The results themselves are checked
// by the correctness matrix (matrix_test.cc), whose small counts run here.
#include <braid/braid.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace braid::itest {
namespace {

// The algorithms the flight recorder shows for the communicator's ops so far.
std::vector<std::string> tracedAlgorithms(braidComm_t comm) {
  const std::string path = "/tmp/braid-slots-test-" + std::to_string(getpid()) + ".json";
  EXPECT_EQ(braidCommDumpTrace(comm, path.c_str()), braidSuccess);
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  unlink(path.c_str());
  std::vector<std::string> algorithms;
  const std::string key = "\"algorithm\":\"";
  for (size_t at = text.str().find(key); at != std::string::npos; at = text.str().find(key, at + 1)) {
    const size_t from = at + key.size();
    algorithms.push_back(text.str().substr(from, text.str().find('"', from) - from));
  }
  return algorithms;
}

// The algorithms the flight recorder shows for a 64 B and a 64 KiB all-reduce.
std::pair<std::string, std::string> algorithmsUsed(braidComm_t comm, int rank, int n) {
  std::vector<float> in(16384, static_cast<float>(rank + 1)), out(16384, 0);
  for (size_t count : {size_t{16}, in.size()}) {
    EXPECT_EQ(braidAllReduce(in.data(), out.data(), count, braidFloat32, braidSum, comm, nullptr),
              braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(out[count - 1], n * (n + 1) / 2.0f);
  }
  const std::vector<std::string> algorithms = tracedAlgorithms(comm);
  EXPECT_EQ(algorithms.size(), 2u);
  if (algorithms.size() != 2) return {};
  return {algorithms[0], algorithms[1]};
}

void expectSlots(bool wanted, const std::function<void(int rank)>& setEnv) {
  RunOptions o;
  o.nranks = 3;
  o.init = false;
  o.limitSeconds = 30;
  runRanks(o, [&](RankContext& ctx) {
    setEnv(ctx.rank);
    braidComm_t comm = nullptr;
    ASSERT_EQ(braidCommInitRank(&comm, 3, ctx.id, ctx.rank), braidSuccess) << braidGetLastError(nullptr);
    auto [small, large] = algorithmsUsed(comm, ctx.rank, 3);
    if (wanted) {
      EXPECT_EQ(small, "shm-slots");
      EXPECT_EQ(large, "shm-slots-chunked") << "past 16 KiB an all-reduce goes in chunks";
    } else {
      EXPECT_EQ(small.rfind("shm-slots", 0), std::string::npos) << small;
      EXPECT_EQ(large.rfind("shm-slots", 0), std::string::npos) << large;
    }
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  });
}

TEST(Slots, SmallCallsUseThemWhenEveryRankSharesTheHost) {
  expectSlots(true, [](int) {});
}

TEST(Slots, AllReducesLargerThanASlotGoInChunks) {
  RunOptions o;
  o.nranks = 3;
  o.init = false;
  runRanks(o, [](RankContext& ctx) {
    setenv("BRAID_SHM_SLOT_BYTES", "4096", 1);
    braidComm_t comm = nullptr;
    ASSERT_EQ(braidCommInitRank(&comm, 3, ctx.id, ctx.rank), braidSuccess) << braidGetLastError(nullptr);
    // 100003 elements: 195 chunks of 512 and a short last one, blocks of uneven size.
    std::vector<double> v(100003);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 1000) * (ctx.rank + 1);
    ASSERT_EQ(braidAllReduce(v.data(), v.data(), v.size(), braidFloat64, braidAvg, comm, nullptr),
              braidSuccess)
        << braidGetLastError(comm);
    size_t wrong = 0;
    for (size_t i = 0; i < v.size(); ++i) wrong += v[i] != static_cast<double>(i % 1000) * 2;  // (1+2+3)/3
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  });
}

// Every chunked collective past a slot's size, with rank 0 writing its
// outputs streaming (BRAID_SHM_STREAM_BYTES=1: every size), rank 1 never
// (-1) and rank 2 as the cache size says (0): each rank chooses alone, and
// every result is exact.
TEST(Slots, ChunkedCollectivesAreExactWhetherOutputsAreStreamedOrNot) {
  RunOptions o;
  o.nranks = 3;
  o.init = false;
  runRanks(o, [](RankContext& ctx) {
    setenv("BRAID_SHM_SLOT_BYTES", "4096", 1);
    setenv("BRAID_SHM_STREAM_BYTES", ctx.rank == 0 ? "1" : ctx.rank == 1 ? "-1" : "0", 1);
    braidComm_t comm = nullptr;
    ASSERT_EQ(braidCommInitRank(&comm, 3, ctx.id, ctx.rank), braidSuccess) << braidGetLastError(nullptr);
    const size_t count = 20011;  // per block: 80044 B, pieces of 4096 and 1344 B and a short last one
    const int n = 3, me = ctx.rank;
    auto value = [](int rank, size_t i) { return static_cast<int32_t>(rank * 1000000 + i); };
    std::vector<int32_t> in(n * count), out(n * count, -1);
    for (size_t i = 0; i < in.size(); ++i) in[i] = value(me, i);
    size_t wrong = 0;

    ASSERT_EQ(braidAllReduce(in.data(), out.data(), count, braidInt32, braidSum, comm, nullptr), braidSuccess)
        << braidGetLastError(comm);
    for (size_t i = 0; i < count; ++i) wrong += out[i] != 3000000 + 3 * static_cast<int32_t>(i);
    EXPECT_EQ(wrong, 0u) << "allreduce";

    ASSERT_EQ(braidAllGather(in.data(), out.data(), count, braidInt32, comm, nullptr), braidSuccess);
    wrong = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) wrong += out[r * count + i] != value(r, i);
    EXPECT_EQ(wrong, 0u) << "allgather";

    ASSERT_EQ(braidReduceScatter(in.data(), out.data(), count, braidInt32, braidSum, comm, nullptr),
              braidSuccess);
    wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += out[i] != 3000000 + 3 * static_cast<int32_t>(me * count + i);
    EXPECT_EQ(wrong, 0u) << "reducescatter";

    ASSERT_EQ(braidAllToAll(in.data(), out.data(), count, braidInt32, comm, nullptr), braidSuccess);
    wrong = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) wrong += out[r * count + i] != value(r, me * count + i);
    EXPECT_EQ(wrong, 0u) << "alltoall";

    ASSERT_EQ(braidBroadcast(in.data(), out.data(), n * count, braidInt32, 2, comm, nullptr), braidSuccess);
    wrong = 0;
    for (size_t i = 0; i < n * count; ++i) wrong += out[i] != value(2, i);
    EXPECT_EQ(wrong, 0u) << "broadcast";
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  });
}

// All-to-alls with blocks of BRAID_SHM_PULL_BYTES (rank 0's) and more are
// pulled from the peers' inputs, smaller ones go in chunks, and one rank
// declining (0) turns pulls off for all; every result exact.
void expectPulls(bool wanted, const char* rank2PullBytes, const std::function<void(int rank)>& before = {}) {
  RunOptions o;
  o.nranks = 3;
  o.init = false;
  o.limitSeconds = 30;
  runRanks(o, [&](RankContext& ctx) {
    if (before) before(ctx.rank);
    setenv("BRAID_SHM_SLOT_BYTES", "4096", 1);
    setenv("BRAID_SHM_PULL_BYTES", ctx.rank == 0 ? "8192" : ctx.rank == 1 ? "1" : rank2PullBytes, 1);
    braidComm_t comm = nullptr;
    ASSERT_EQ(braidCommInitRank(&comm, 3, ctx.id, ctx.rank), braidSuccess) << braidGetLastError(nullptr);
    const int n = 3, me = ctx.rank;
    auto value = [](int rank, size_t i) { return static_cast<int32_t>(rank * 1000000 + i); };
    // Blocks of 8192 and 8188 B: 24 KiB out, under any last-level cache's share.
    for (size_t count : {size_t{2048}, size_t{2047}}) {
      std::vector<int32_t> in(n * count), out(n * count, -1);
      for (size_t i = 0; i < in.size(); ++i) in[i] = value(me, i);
      ASSERT_EQ(braidAllToAll(in.data(), out.data(), count, braidInt32, comm, nullptr), braidSuccess)
          << braidGetLastError(comm);
      size_t wrong = 0;
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i) wrong += out[r * count + i] != value(r, me * count + i);
      EXPECT_EQ(wrong, 0u) << count;
    }
    const std::vector<std::string> algorithms = tracedAlgorithms(comm);
    EXPECT_EQ(algorithms, (std::vector<std::string>{wanted ? "shm-slots-pulled" : "shm-slots-chunked",
                                                    "shm-slots-chunked"}));
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  });
}

TEST(Slots, LargeAllToAllsArePulledFromRank0sSizeOn) { expectPulls(true, "268435456"); }

TEST(Slots, OneRankDecliningPullsTurnsThemOffForAll) { expectPulls(false, "0"); }

// Makes a communicator of n ranks whose all-to-alls (and 2-rank
// all-gathers) pull from blocks of 8 KiB.
void initPullingFrom8KiB(RankContext& ctx, int n, braidComm_t* comm) {
  setenv("BRAID_SHM_PULL_BYTES", "8192", 1);
  ASSERT_EQ(braidCommInitRank(comm, n, ctx.id, ctx.rank), braidSuccess) << braidGetLastError(nullptr);
}

// With 2 ranks an all-gather pulls too (out of place and in place); with
// more it goes in chunks.
TEST(Slots, TwoRankAllGathersArePulled) {
  for (int n : {2, 3}) {
    RunOptions o;
    o.nranks = n;
    o.init = false;
    o.limitSeconds = 30;
    runRanks(o, [n](RankContext& ctx) {
      braidComm_t comm = nullptr;
      ASSERT_NO_FATAL_FAILURE(initPullingFrom8KiB(ctx, n, &comm));
      const size_t count = 5000;  // 20000 B a block
      auto value = [](int rank, size_t i) { return static_cast<int32_t>(rank * 1000000 + i); };
      std::vector<int32_t> in(count), out(n * count, -1);
      for (size_t i = 0; i < count; ++i) in[i] = out[ctx.rank * count + i] = value(ctx.rank, i);
      ASSERT_EQ(braidAllGather(in.data(), out.data(), count, braidInt32, comm, nullptr), braidSuccess)
          << braidGetLastError(comm);
      std::vector<int32_t> inPlace(n * count, -1);
      for (size_t i = 0; i < count; ++i) inPlace[ctx.rank * count + i] = value(ctx.rank, i);
      ASSERT_EQ(braidAllGather(&inPlace[ctx.rank * count], inPlace.data(), count, braidInt32, comm, nullptr),
                braidSuccess)
          << braidGetLastError(comm);
      size_t wrong = 0;
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          wrong += (out[r * count + i] != value(r, i)) + (inPlace[r * count + i] != value(r, i));
      EXPECT_EQ(wrong, 0u);
      const std::string path = n == 2 ? "shm-slots-pulled" : "shm-slots-chunked";
      EXPECT_EQ(tracedAlgorithms(comm), (std::vector<std::string>{path, path})) << n << " ranks";
      EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
    });
  }
}

// Pulled calls whose inputs came from braidMemAlloc: every rank reads such
// a peer's input through a mapping of its region (the INFO line says so)
// and the others with process_vm_readv (rank 2's input is plain memory
// here), and both results are exact; the same buffers called again are not
// mapped again. Then a 2-rank all-gather, out of place and in place.
void expectShareableInputsRead(int n) {
  setenv("BRAID_DEBUG", "INFO", 1);
  setenv("BRAID_DEBUG_FILE", "/tmp/braid-shareable-test-%p.log", 1);
  RunOptions o;
  o.nranks = n;
  o.init = false;
  o.limitSeconds = 30;
  runRanks(o, [n](RankContext& ctx) {
    braidComm_t comm = nullptr;
    ASSERT_NO_FATAL_FAILURE(initPullingFrom8KiB(ctx, n, &comm));
    const int me = ctx.rank;
    const size_t count = 5000;  // 20000 B a block
    auto value = [](int rank, size_t i, int call) { return static_cast<int32_t>(rank * 1000000 + i + call); };
    const bool shareable = me != 2;
    const size_t bytes = n * count * sizeof(int32_t);
    void* in = nullptr;
    std::vector<int32_t> plainIn;
    if (shareable) {
      ASSERT_EQ(braidMemAlloc(&in, bytes), braidSuccess) << braidGetLastError(nullptr);
    } else {
      plainIn.resize(n * count);
      in = plainIn.data();
    }
    auto* input = static_cast<int32_t*>(in);
    std::vector<int32_t> out(n * count);
    size_t wrong = 0;
    for (int call = 0; call < 3; ++call) {
      for (size_t i = 0; i < n * count; ++i) input[i] = value(me, i, call);
      std::fill(out.begin(), out.end(), -1);
      ASSERT_EQ(braidAllToAll(in, out.data(), count, braidInt32, comm, nullptr), braidSuccess)
          << braidGetLastError(comm);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i) wrong += out[r * count + i] != value(r, me * count + i, call);
    }
    EXPECT_EQ(wrong, 0u) << "alltoall";
    if (n == 2) {  // all-gathers of 2 ranks pull too: out of place, then in place
      void* gathered = nullptr;
      ASSERT_EQ(braidMemAlloc(&gathered, bytes), braidSuccess);
      auto* g = static_cast<int32_t*>(gathered);
      ASSERT_EQ(braidAllGather(in, gathered, count, braidInt32, comm, nullptr), braidSuccess)
          << braidGetLastError(comm);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i) wrong += g[r * count + i] != value(r, i, 2);
      for (size_t i = 0; i < count; ++i) g[me * count + i] = value(me, i, 7);
      ASSERT_EQ(braidAllGather(g + me * count, gathered, count, braidInt32, comm, nullptr), braidSuccess)
          << braidGetLastError(comm);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i) wrong += g[r * count + i] != value(r, i, 7);
      EXPECT_EQ(wrong, 0u) << "allgather";
      EXPECT_EQ(braidMemFree(gathered), braidSuccess);
    }
    for (const std::string& path : tracedAlgorithms(comm)) EXPECT_EQ(path, "shm-slots-pulled");
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
    if (shareable) {
      EXPECT_EQ(braidMemFree(in), braidSuccess);
    }
    const std::string log = "/tmp/braid-shareable-test-" + std::to_string(getpid()) + ".log";
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    unlink(log.c_str());
    // Each rank maps every peer's region it reads once: the all-to-all's
    // input of each shareable peer (which the out-of-place all-gather reads
    // again), and with 2 ranks the in-place all-gather's output region.
    size_t maps = 0;
    for (size_t at = text.str().find("with plain loads"); at != std::string::npos;
         at = text.str().find("with plain loads", at + 1))
      ++maps;
    const size_t shareablePeers = static_cast<size_t>(n == 2 ? 1 : (me == 2 ? 2 : 1));
    EXPECT_EQ(maps, shareablePeers + (n == 2 ? 1 : 0)) << "rank " << me << ": " << text.str();
  });
  unsetenv("BRAID_DEBUG");
  unsetenv("BRAID_DEBUG_FILE");
}

TEST(Slots, PulledInputsFromBraidMemAllocAreReadThroughMappings) { expectShareableInputsRead(3); }

TEST(Slots, TwoRankAllGathersReadBraidMemAllocInputsThroughMappings) { expectShareableInputsRead(2); }

// Drops CAP_SYS_PTRACE from this process's effective set (root has it, and
// it lets a process read any other's memory).
void dropPtraceCapability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  ASSERT_EQ(syscall(SYS_capget, &header, data), 0) << std::strerror(errno);
  data[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
  ASSERT_EQ(syscall(SYS_capset, &header, data), 0) << std::strerror(errno);
}

// Rank 1 is not dumpable and rank 0 may not trace it, so the kernel refuses
// rank 0's reads of rank 1 (EPERM) as a container's seccomp or Yama policy
// would: nobody pulls, and every all-to-all is still exact.
TEST(Slots, PullsAreOffForAllWhenOneRankMayNotReadAnother) {
  expectPulls(false, "268435456", [](int rank) {
    if (rank == 0) dropPtraceCapability();
    if (rank == 1) {
      ASSERT_EQ(prctl(PR_SET_DUMPABLE, 0), 0);
    }
  });
}

TEST(Slots, ForcedTcpKeepsThemOff) {
  expectSlots(false, [](int) { setenv("BRAID_TRANSPORT", "tcp", 1); });
}

TEST(Slots, OneRankForcingTcpKeepsThemOffForAll) {
  expectSlots(false, [](int rank) {
    if (rank == 2) setenv("BRAID_TRANSPORT", "tcp", 1);
  });
}

TEST(Slots, RanksOnDifferentHostsDoNotUseThem) {
  expectSlots(false,
              [](int rank) { setenv("BRAID_HOSTID", rank == 0 ? "slots-host-a" : "slots-host-b", 1); });
}

TEST(Slots, ZeroBytesTurnsThemOff) {
  expectSlots(false, [](int) { setenv("BRAID_SHM_SLOT_BYTES", "0", 1); });
}

TEST(Slots, AForcedAlgorithmIsWhatRuns) {
  expectSlots(false, [](int) { setenv("BRAID_ALGO", "allreduce:ring", 1); });
}

// Collectives inside a group are fused into one schedule with the rest of the
// group: small ones must not be left to the slots (which would leave them
// out of the schedule).
TEST(Slots, SmallCollectivesInAGroupAreComputed) {
  runRanks(3, [](RankContext& ctx) {
    std::vector<int32_t> a(4, ctx.rank + 1), b(2, 10 * (ctx.rank + 1)), outA(4, 0), outB(6, 0);
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidAllReduce(a.data(), outA.data(), a.size(), braidInt32, braidSum, ctx.comm, nullptr),
              braidSuccess);
    EXPECT_EQ(braidAllGather(b.data(), outB.data(), b.size(), braidInt32, ctx.comm, nullptr), braidSuccess);
    ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(ctx.comm);
    EXPECT_EQ(outA, std::vector<int32_t>(4, 6));
    EXPECT_EQ(outB, (std::vector<int32_t>{10, 10, 20, 20, 30, 30}));
  });
}

// Small rooted calls let the ranks that wait for nobody run ahead (the
// cells, core/host_slots.h): every non-root makes all its reduces, and says
// so, before the root makes any. Without that, a non-root would wait in its
// second call for the root, and the root for the non-roots' word: a hang the
// harness's limit ends. The root then finds every sum right.
TEST(Slots, SmallReducesRunAheadOfTheirRoot) {
  RunOptions o;
  o.nranks = 3;
  o.sharedBytes = 64;
  o.limitSeconds = 30;
  runRanks(o, [](RankContext& ctx) {
    constexpr int kCalls = 63;  // HostSlots::kCells - 1
    auto* nonRootsDone = static_cast<std::atomic<int>*>(ctx.shared);
    if (ctx.rank != 0) {
      for (int k = 0; k < kCalls; ++k) {
        const int32_t x = 10 * k + ctx.rank;
        ASSERT_EQ(braidReduce(&x, nullptr, 1, braidInt32, braidSum, 0, ctx.comm, nullptr), braidSuccess)
            << "call " << k << ": " << braidGetLastError(ctx.comm);
      }
      nonRootsDone->fetch_add(1);
      return;
    }
    while (nonRootsDone->load() < ctx.nranks - 1) sched_yield();
    for (int k = 0; k < kCalls; ++k) {
      const int32_t x = 10 * k;
      int32_t sum = -1;
      ASSERT_EQ(braidReduce(&x, &sum, 1, braidInt32, braidSum, 0, ctx.comm, nullptr), braidSuccess)
          << "call " << k << ": " << braidGetLastError(ctx.comm);
      EXPECT_EQ(sum, 30 * k + 3) << "call " << k;
    }
    EXPECT_EQ(tracedAlgorithms(ctx.comm).back(), "shm-slots");
  });
}

}  // namespace
}  // namespace braid::itest

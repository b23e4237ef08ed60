// Bad input to the entries that need no communicator, and to init itself.
// Every body runs in a child process (the harness), so the gtest process never
// loads braid's state.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "checks.h"
#include "data.h"
#include "harness.h"

namespace braid::itest {
namespace {

RunOptions solo() {
  RunOptions o;
  o.nranks = 1;
  o.rendezvous = false;
  o.limitSeconds = 30;
  return o;
}

TEST(BadInputInit, ErrorStringsAndVersion) {
  runRanks(solo(), [](RankContext&) {
    std::set<std::string> seen;
    for (int code = 0; code < braidNumResults; ++code) {
      const char* s = braidGetErrorString(static_cast<braidResult_t>(code));
      ASSERT_NE(s, nullptr) << "code " << code;
      EXPECT_GT(strlen(s), 0u) << "code " << code;
      EXPECT_TRUE(seen.insert(s).second) << "code " << code << " shares its string \"" << s << "\"";
    }
    for (int code : {-1, static_cast<int>(braidNumResults), 99, 1 << 30}) {
      const char* s = braidGetErrorString(static_cast<braidResult_t>(code));
      ASSERT_NE(s, nullptr) << "code " << code;
      EXPECT_GT(strlen(s), 0u) << "code " << code;
    }
    ASSERT_NE(braidGetLastError(nullptr), nullptr);
    int version = 0;
    EXPECT_EQ(braidGetVersion(&version), braidSuccess);
    EXPECT_EQ(version, BRAID_VERSION_CODE);
    expectRejected("braidGetVersion(NULL)", braidGetVersion(nullptr), braidInvalidArgument, nullptr,
                   "version");
  });
}

// braidMemAlloc / braidMemFree: a NULL result pointer, sizes it cannot
// allocate, pointers it did not make (or freed already): each an error that
// names what is wrong and changes nothing.
TEST(BadInputInit, MemAllocAndFree) {
  runRanks(solo(), [](RankContext&) {
    auto rejected = [](const char* what, braidResult_t r, const char* name) {
      expectRejected(what, r, braidInvalidArgument, nullptr, name);
    };
    void* p = &p;
    rejected("braidMemAlloc(NULL, 64)", braidMemAlloc(nullptr, 64), "ptr");
    rejected("braidMemAlloc(&p, 0)", braidMemAlloc(&p, 0), "size");
    rejected("braidMemAlloc(&p, SIZE_MAX)", braidMemAlloc(&p, SIZE_MAX), "size");
    EXPECT_EQ(p, static_cast<void*>(&p)) << "a refused allocation writes nothing";
    rejected("braidMemFree(NULL)", braidMemFree(nullptr), "ptr");
    int local = 0;
    rejected("braidMemFree(a stack address)", braidMemFree(&local), "braidMemAlloc");
    ASSERT_EQ(braidMemAlloc(&p, 100), braidSuccess);
    static_cast<char*>(p)[99] = 1;
    rejected("braidMemFree(inside an allocation)", braidMemFree(static_cast<char*>(p) + 8), "braidMemAlloc");
    EXPECT_EQ(static_cast<char*>(p)[99], 1) << "still allocated";
    EXPECT_EQ(braidMemFree(p), braidSuccess);
    rejected("braidMemFree twice", braidMemFree(p), "freed");
  });
}

TEST(BadInputInit, NullHandles) {
  runRanks(solo(), [](RankContext&) {
    braidResult_t async = braidSuccess;
    int value = 0;
    auto rejected = [](const char* what, braidResult_t r, const char* name) {
      expectRejected(what, r, braidInvalidArgument, nullptr, name);
    };
    rejected("braidGetUniqueId(NULL)", braidGetUniqueId(nullptr), "uniqueId");
    rejected("braidCommInitFromEnv(NULL)", braidCommInitFromEnv(nullptr, nullptr), "comm");
    rejected("braidCommDestroy(NULL)", braidCommDestroy(nullptr), "comm");
    rejected("braidCommAbort(NULL)", braidCommAbort(nullptr), "comm");
    rejected("braidCommGetAsyncError(NULL)", braidCommGetAsyncError(nullptr, &async), "comm");
    rejected("braidCommCount(NULL)", braidCommCount(nullptr, &value), "comm");
    rejected("braidCommUserRank(NULL)", braidCommUserRank(nullptr, &value), "comm");
    char a[64] = {}, b[64] = {};
    size_t counts[1] = {1}, displs[1] = {0};
    rejected("braidAllReduce(comm NULL)", braidAllReduce(a, b, 1, braidInt8, braidSum, nullptr, nullptr),
             "comm");
    rejected("braidBroadcast(comm NULL)", braidBroadcast(a, b, 1, braidInt8, 0, nullptr, nullptr), "comm");
    rejected("braidReduce(comm NULL)", braidReduce(a, b, 1, braidInt8, braidSum, 0, nullptr, nullptr),
             "comm");
    rejected("braidAllGather(comm NULL)", braidAllGather(a, b, 1, braidInt8, nullptr, nullptr), "comm");
    rejected("braidReduceScatter(comm NULL)",
             braidReduceScatter(a, b, 1, braidInt8, braidSum, nullptr, nullptr), "comm");
    rejected("braidAllToAll(comm NULL)", braidAllToAll(a, b, 1, braidInt8, nullptr, nullptr), "comm");
    rejected("braidAllToAllv(comm NULL)",
             braidAllToAllv(a, counts, displs, b, counts, displs, braidInt8, nullptr, nullptr), "comm");
    rejected("braidSend(comm NULL)", braidSend(a, 1, braidInt8, 0, nullptr, nullptr), "comm");
    rejected("braidRecv(comm NULL)", braidRecv(b, 1, braidInt8, 0, nullptr, nullptr), "comm");
    rejected("braidBarrier(comm NULL)", braidBarrier(nullptr, nullptr), "comm");
    for (size_t i = 0; i < sizeof a; ++i) EXPECT_EQ(a[i] | b[i], 0) << "a buffer was written";

    rejected("braidStreamCreate(NULL)", braidStreamCreate(nullptr), "stream");
    rejected("braidStreamDestroy(NULL)", braidStreamDestroy(nullptr), "stream");
    rejected("braidEventCreate(NULL)", braidEventCreate(nullptr), "event");
    rejected("braidEventDestroy(NULL)", braidEventDestroy(nullptr), "event");
    rejected("braidEventQuery(NULL)", braidEventQuery(nullptr), "event");
    rejected("braidEventSynchronize(NULL)", braidEventSynchronize(nullptr), "event");
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess) << braidGetLastError(nullptr);
    rejected("braidEventRecord(NULL, stream)", braidEventRecord(nullptr, stream), "event");
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);

    expectRejected("braidGroupEnd() without braidGroupStart()", braidGroupEnd(), braidInvalidUsage, nullptr,
                   "group");
  });
}

TEST(BadInputInit, InitArguments) {
  runRanks(solo(), [](RankContext&) {
    braidUniqueId id;
    ASSERT_EQ(braidGetUniqueId(&id), braidSuccess) << braidGetLastError(nullptr);
    braidComm_t comm = nullptr;
    auto init = [&](const char* what, int nranks, int rank, const char* name) {
      expectRejected(what, braidCommInitRank(&comm, nranks, id, rank), braidInvalidArgument, nullptr, name);
    };
    expectRejected("braidCommInitRank(comm NULL)", braidCommInitRank(nullptr, 1, id, 0), braidInvalidArgument,
                   nullptr, "comm");
    init("nranks 0", 0, 0, "nranks");
    init("nranks -1", -1, 0, "nranks");
    init("rank -1", 2, -1, "rank");
    init("rank == nranks", 2, 2, "rank");
    init("rank > nranks", 2, 7, "rank");

    braidConfig_t good = BRAID_CONFIG_INITIALIZER;
    braidConfig_t bad = good;
    bad.magic = 0;
    expectRejected("config with a wrong magic", braidCommInitRankConfig(&comm, 1, id, 0, &bad),
                   braidInvalidArgument, nullptr, "config");
    bad = good;
    bad.size = 3;
    expectRejected("config with size 3", braidCommInitRankConfig(&comm, 1, id, 0, &bad), braidInvalidArgument,
                   nullptr, "config");
    bad = good;
    bad.version = 1000;
    expectRejected("config version 1000", braidCommInitRankConfig(&comm, 1, id, 0, &bad),
                   braidInvalidArgument, nullptr, "config");
    // The id is still good after all of that: a real one-rank communicator forms.
    ASSERT_EQ(braidCommInitRankConfig(&comm, 1, id, 0, &good), braidSuccess) << braidGetLastError(nullptr);
    int value = -1;
    EXPECT_EQ(braidCommCount(comm, &value), braidSuccess);
    EXPECT_EQ(value, 1);
    EXPECT_EQ(braidCommUserRank(comm, &value), braidSuccess);
    EXPECT_EQ(value, 0);
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  });
}

// No launcher variables at all: init from the environment must fail, quickly.
TEST(BadInputInit, FromEnvWithoutLauncher) {
  runRanks(solo(), [](RankContext&) {
    for (const char* v : {"BRAID_RANK", "BRAID_WORLD_SIZE", "BRAID_ROOT_ADDR", "BRAID_SECRET", "RANK",
                          "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK",
                          "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"})
      unsetenv(v);
    braidComm_t comm = nullptr;
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = 2000;
    braidResult_t r = braidCommInitFromEnv(&comm, &cfg);
    EXPECT_NE(r, braidSuccess) << "no rank, size or address in the environment";
    EXPECT_GT(strlen(braidGetLastError(nullptr)), 0u);
  });
}

// Settings out of range fail init with InvalidArgument naming the variable.
TEST(BadInputInit, BadSettingsFailInitNamingTheVariable) {
  RunOptions o;
  o.nranks = 1;
  o.init = false;
  runRanks(o, [](RankContext& ctx) {
    const std::pair<const char*, const char*> bad[] = {
        {"BRAID_SHM_SLOT_BYTES", "-1"},      {"BRAID_SHM_SLOT_BYTES", "1048577"},
        {"BRAID_SHM_PULL_BYTES", "-1"},      {"BRAID_MAX_MESSAGE_BYTES", "-1"},
        {"BRAID_MAX_MESSAGE_BYTES", "4095"}, {"BRAID_SOCKET_TC", "-2"},
        {"BRAID_SOCKET_TC", "256"}};
    for (const auto& [name, value] : bad) {
      setenv(name, value, 1);
      braidComm_t comm = nullptr;
      EXPECT_EQ(braidCommInitRank(&comm, 1, ctx.id, 0), braidInvalidArgument) << name << "=" << value;
      EXPECT_NE(std::string(braidGetLastError(nullptr)).find(name), std::string::npos)
          << braidGetLastError(nullptr);
      unsetenv(name);
    }
  });
}

// A garbage id (random bytes, all zeros) must be refused without hanging.
TEST(BadInputInit, GarbageUniqueId) {
  runRanks(solo(), [](RankContext&) {
    braidUniqueId ids[2];
    for (size_t i = 0; i < sizeof ids[0].internal; ++i)
      ids[0].internal[i] = static_cast<char>(mix(i + 12345) & 0xff);
    memset(&ids[1], 0, sizeof ids[1]);
    for (const braidUniqueId& id : ids) {
      for (int rank : {0, 1}) {
        braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
        cfg.timeoutMs = 1500;
        braidComm_t comm = nullptr;
        auto t0 = std::chrono::steady_clock::now();
        braidResult_t r = braidCommInitRankConfig(&comm, 2, id, rank, &cfg);
        auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
        EXPECT_NE(r, braidSuccess) << (&id == ids ? "random" : "zero") << " id, rank " << rank;
        EXPECT_GT(strlen(braidGetLastError(nullptr)), 0u);
        EXPECT_LT(ms.count(), 4500) << "a garbage id took " << ms.count() << " ms to refuse";
      }
    }
  });
}

}  // namespace
}  // namespace braid::itest

// Fault injection over real processes: a rank is killed, stopped, has a link
// closed under it or a frame header corrupted, aborts from another thread, or
// calls a different collective than the others. Every case asserts that each
// surviving rank returns the right code within the promised bound with a
// message naming the culprit, that nothing hangs (the harness's outer limit),
// that nothing leaks (threads, fds, /dev/shm segments) once the communicators
// are destroyed, and that the survivors' shrunk communicator computes.
//
// Promised bounds (README / watchdog.h): a dead or aborting rank, a broken
// link, a corrupt frame or a mismatch reaches every rank within 1 s; a silent
// rank within BRAID_HEARTBEAT_MS x (BRAID_HEARTBEAT_MISSES + 1) + 1 s. The
// tests set 200 ms x 5.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "tests/common/process_census.h"

namespace braid::itest {
namespace {

using ::testing::HasSubstr;

enum class Kind { kKill, kKillHub, kStop, kCloseSocket, kCorruptHeader, kAbortInline, kAbortStream, kMismatch };

struct Case {
  Kind kind;
  const char* name;
  int nranks;
  const char* transport;
  // Op 2 on the shared slots of a one-host communicator (core/host_slots.h)
  // instead of the executor's ring: whole (a small call) or in chunks (1 MiB).
  enum Slots { kOff, kWhole, kChunked } slots = kOff;
};

constexpr int kMaxRanks = 8;
constexpr size_t kCount = 256 * 1024;  // 1 MiB of int32: the fault lands mid-transfer
constexpr size_t kSlotsCount = 64;     // 256 B: on the shared slots
constexpr int kHeartbeatMs = 200, kMisses = 5;
constexpr int64_t kFastBoundMs = 1000;
constexpr int64_t kSilentBoundMs = kHeartbeatMs * (kMisses + 1) + 1000;

struct Shared {
  std::atomic<int64_t> faultNs{0};
  std::atomic<int64_t> enterNs[kMaxRanks];
  std::atomic<int64_t> doneNs[kMaxRanks];
  std::atomic<int> warmedUp{0};  // ranks done with op 1
  std::atomic<int> returned{0};
  std::atomic<int> victimPid{0};
};

int64_t monoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

using test::countEntries;
using test::threadNames;

int victimOf(const Case& c) { return c.kind == Kind::kKillHub ? 0 : c.kind == Kind::kAbortInline || c.kind == Kind::kAbortStream ? 1 : 2; }

// Waits (bounded) until the flight recorder shows an op running, so that an
// abort lands mid-collective.
void waitStarted(braidComm_t comm) {
  const std::string path = "/tmp/braid-fault-test-" + std::to_string(getpid()) + ".json";
  for (int64_t until = monoNs() + 5000000000; monoNs() < until;) {
    ASSERT_EQ(braidCommDumpTrace(comm, path.c_str()), braidSuccess);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("\"state\":\"started\"") != std::string::npos) break;
    usleep(1000);  // a bounded poll, not a synchronisation
  }
  unlink(path.c_str());
}

void expectSum(braidComm_t comm, int mine, int expected) {
  std::vector<int32_t> v(1024, mine), out(1024, 0);
  ASSERT_EQ(braidAllReduce(v.data(), out.data(), v.size(), braidInt32, braidSum, comm, nullptr), braidSuccess)
      << braidGetLastError(comm);
  EXPECT_EQ(out[0], expected);
  EXPECT_EQ(out[1023], expected);
}

// The aborting rank: a second thread is inside the collective (inline, or
// waiting in braidStreamSynchronize) when this thread aborts.
void abortingRank(braidComm_t comm, const Case& c, Shared* sh, std::vector<int32_t>& in, std::vector<int32_t>& out) {
  const size_t count = in.size();
  braidResult_t seen = braidSuccess;
  braidStream_t stream = nullptr;
  std::thread waiter;
  if (c.kind == Kind::kAbortStream) {
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    ASSERT_EQ(braidAllReduce(in.data(), out.data(), count, braidInt32, braidSum, comm, stream), braidSuccess);
    waiter = std::thread([&] { seen = braidStreamSynchronize(stream); });
  } else {
    waiter = std::thread(
        [&] { seen = braidAllReduce(in.data(), out.data(), count, braidInt32, braidSum, comm, nullptr); });
  }
  waitStarted(comm);
  sh->faultNs = monoNs();
  EXPECT_EQ(braidCommAbort(comm), braidSuccess);
  const int64_t returnedBy = monoNs() - sh->faultNs;
  waiter.join();
  EXPECT_EQ(seen, braidAborted);
  EXPECT_LT(returnedBy, 1000000000) << "braidCommAbort took " << returnedBy / 1000000 << " ms";
  if (stream) {
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
  }
}

void rankBody(RankContext& ctx, const Case& c, Shared* sh) {
  // Sanitizer runtimes start helper threads of their own at a process's first
  // pthread_create and keep them (TSan: its background thread, started again in
  // a forked child): one thread started and joined first puts them in the baseline.
  std::thread([] {}).join();
  const int threadsBefore = countEntries("/proc/self/task"), fdsBefore = countEntries("/proc/self/fd");
  const int n = ctx.nranks, me = ctx.rank, victim = victimOf(c);
  braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
  cfg.timeoutMs = 20000;
  braidComm_t comm = nullptr;
  ASSERT_EQ(braidCommInitRankConfig(&comm, n, ctx.id, me, &cfg), braidSuccess) << braidGetLastError(nullptr);
  expectSum(comm, me + 1, n * (n + 1) / 2);  // op 1
  // A fault fails every op still running anywhere, so op 1 must be over on
  // every rank before op 2 and its fault begin.
  sh->warmedUp++;
  for (int64_t until = monoNs() + 10000000000; sh->warmedUp.load() < n && monoNs() < until;) usleep(200);
  ASSERT_EQ(sh->warmedUp.load(), n);

  const size_t count = c.slots == Case::kWhole ? kSlotsCount : kCount;
  std::vector<int32_t> in(count, me + 1), out(count, 0);
  const bool aborting = c.kind == Kind::kAbortInline || c.kind == Kind::kAbortStream;
  const int holdBack = aborting ? n - 1 : -1;  // enters op 2 only after the others failed
  sh->enterNs[me] = monoNs();
  if (me == victim && (c.kind == Kind::kKill || c.kind == Kind::kKillHub)) {
    sh->faultNs = monoNs();
    kill(getpid(), SIGKILL);
  }
  if (me == victim && c.kind == Kind::kStop) {
    sh->victimPid = getpid();
    sh->faultNs = monoNs();
    raise(SIGSTOP);
    pause();  // never resumed: a survivor kills it
  }
  bool alive = true;  // this rank stays a member of the shrunk communicator
  if (me == victim && aborting) {
    abortingRank(comm, c, sh, in, out);
    comm = nullptr;  // released by braidCommAbort
    alive = false;
  } else {
    if (me == holdBack) {
      for (int64_t until = monoNs() + 10000000000; sh->returned.load() < n - 2 && monoNs() < until;) usleep(1000);
      ASSERT_EQ(sh->returned.load(), n - 2) << "the other ranks never failed";
    }
    braidResult_t r;
    if (c.kind == Kind::kMismatch && me == victim)
      r = braidAllGather(in.data(), out.data(), count / n, braidInt32, comm, nullptr);
    else
      r = braidAllReduce(in.data(), out.data(), count, braidInt32, braidSum, comm, nullptr);
    if (me != holdBack) sh->doneNs[me] = monoNs();
    const std::string msg = braidGetLastError(comm);
    const std::string culprit = "rank " + std::to_string(victim);
    braidResult_t expected = braidRemoteError;
    if (c.kind == Kind::kStop) expected = braidTimeout;
    if (c.kind == Kind::kCloseSocket && me == victim) expected = braidSystemError;
    EXPECT_EQ(r, expected) << braidGetErrorString(r) << ": " << msg;
    switch (c.kind) {
      case Kind::kKill:
      case Kind::kKillHub: EXPECT_THAT(msg, HasSubstr(culprit + " died")); break;
      case Kind::kStop: EXPECT_THAT(msg, HasSubstr(culprit + " is silent")); break;
      case Kind::kAbortInline:
      case Kind::kAbortStream: EXPECT_THAT(msg, HasSubstr(culprit + " aborted the communicator")); break;
      case Kind::kMismatch:
        EXPECT_THAT(msg, HasSubstr("different collectives"));
        if (me != victim) {
          EXPECT_THAT(msg, HasSubstr(culprit));
        }
        break;
      case Kind::kCloseSocket:  // the culprit says what happened to it; the others name it
        EXPECT_THAT(msg, HasSubstr(me == victim ? std::string("closed under this rank") : culprit));
        break;
      case Kind::kCorruptHeader: EXPECT_THAT(msg, HasSubstr(culprit)); break;
    }
    sh->returned++;
    if (me == victim) alive = false;
  }

  if (alive) {
    const int excluded[] = {victim};
    braidComm_t survivors = nullptr;
    ASSERT_EQ(braidCommShrink(comm, excluded, 1, &survivors), braidSuccess) << braidGetLastError(comm);
    int sum = 0;
    for (int r = 0; r < n; ++r) sum += r == victim ? 0 : r + 1;
    expectSum(survivors, me + 1, sum);
    EXPECT_EQ(braidCommDestroy(survivors), braidSuccess);
  }
  if (comm) {
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess) << braidGetLastError(nullptr);
  }
  if (c.kind == Kind::kStop && me == (victim == 0 ? 1 : 0)) kill(sh->victimPid.load(), SIGKILL);

  EXPECT_LE(test::threadsOnceJoinedAreGone(threadsBefore), threadsBefore)
      << "threads leaked: " << threadNames();
  EXPECT_LE(countEntries("/proc/self/fd"), fdsBefore) << "fds leaked";
  EXPECT_EQ(countEntries("/dev/shm", "braid-shm-" + std::to_string(getpid()) + "-"), 0) << "shm segments leaked";
}

class Faults : public ::testing::TestWithParam<Case> {};

TEST_P(Faults, EverySurvivorFailsFastNamingTheCulprit) {
  const Case c = GetParam();
  if (std::string(c.transport) == "ucx")
    if (std::string why = ucxMissing(); !why.empty()) GTEST_SKIP() << why;
  auto* sh = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(sh, MAP_FAILED);
  new (sh) Shared();
  const int victim = victimOf(c);
  setenv("BRAID_TRANSPORT", c.transport, 1);
#ifdef BRAID_NCCL_NET_PLUGIN_PATH
  if (std::string(c.transport) == "netplugin") {
    setenv("BRAID_NET_PLUGIN", BRAID_NCCL_NET_PLUGIN_PATH, 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
  }
#endif
  // ibverbs: the fake libibverbs, one fabric in shared memory for this case.
  const std::string fabric = "/braid-fake-verbs-fault-" + std::to_string(getpid());
#ifdef BRAID_FAKE_VERBS_PATH
  if (std::string(c.transport) == "ibverbs") {
    setenv("BRAID_IB_LIBRARY", BRAID_FAKE_VERBS_PATH, 1);
    setenv("BRAID_FAKE_VERBS_FABRIC", fabric.c_str(), 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
  }
#endif
  setenv("BRAID_HEARTBEAT_MS", std::to_string(kHeartbeatMs).c_str(), 1);
  setenv("BRAID_HEARTBEAT_MISSES", std::to_string(kMisses).c_str(), 1);
  // A forced algorithm keeps op 2 off the shared slots.
  if (c.slots == Case::kOff) setenv("BRAID_ALGO", "allreduce:ring;allgather:ring", 1);
  if (c.kind == Kind::kCloseSocket || c.kind == Kind::kCorruptHeader) {
    const std::string spec = "rank=" + std::to_string(victim) + ",op=2,kind=" +
                             (c.kind == Kind::kCloseSocket ? "close-socket" : "corrupt-header");
    setenv("BRAID_FAULT_INJECT", spec.c_str(), 1);
  }
  RunOptions o;
  o.nranks = c.nranks;
  o.init = false;
  o.limitSeconds = 40;
  if (c.kind == Kind::kKill || c.kind == Kind::kKillHub || c.kind == Kind::kStop) o.mayBeKilled = {victim};
  runRanks(o, [&](RankContext& ctx) { rankBody(ctx, c, sh); });
  for (const char* v :
       {"BRAID_TRANSPORT", "BRAID_HEARTBEAT_MS", "BRAID_HEARTBEAT_MISSES", "BRAID_ALGO", "BRAID_FAULT_INJECT",
        "BRAID_NET_PLUGIN", "BRAID_SOCKET_IFNAME", "BRAID_IB_LIBRARY", "BRAID_FAKE_VERBS_FABRIC"})
    unsetenv(v);
  shm_unlink(fabric.c_str());

  // Detection time: from the fault (or, where the fault fires inside op 2,
  // from the last rank entering it) to the last survivor's return.
  int64_t from = sh->faultNs.load(), last = 0;
  const bool aborting = c.kind == Kind::kAbortInline || c.kind == Kind::kAbortStream;
  if (c.kind == Kind::kCloseSocket || c.kind == Kind::kCorruptHeader || c.kind == Kind::kMismatch)
    for (int r = 0; r < c.nranks; ++r) from = std::max(from, sh->enterNs[r].load());
  for (int r = 0; r < c.nranks; ++r)
    if (r != victim && !(aborting && r == c.nranks - 1)) last = std::max(last, sh->doneNs[r].load());
  if (!HasFailure()) {
    const int64_t ms = (last - from) / 1000000;
    const int64_t bound = c.kind == Kind::kStop ? kSilentBoundMs : kFastBoundMs;
    std::printf("[fault-timing] %s n=%d %s: detected by every survivor in %lld ms (bound %lld ms)\n", c.name,
                c.nranks, c.transport, static_cast<long long>(ms), static_cast<long long>(bound));
    EXPECT_GT(last, 0);
    EXPECT_LE(ms, bound);
  }
  munmap(sh, sizeof(Shared));
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  const std::pair<Kind, const char*> kinds[] = {
      {Kind::kKill, "kill"},           {Kind::kKillHub, "kill_hub"},     {Kind::kStop, "stop"},
      {Kind::kCloseSocket, "close_socket"}, {Kind::kCorruptHeader, "corrupt_header"},
      {Kind::kAbortInline, "abort_inline"}, {Kind::kAbortStream, "abort_stream"}, {Kind::kMismatch, "mismatch"}};
  for (auto [kind, name] : kinds)
    for (int n : {4, 8})
      for (const char* t : {"tcp", "shm"}) cases.push_back({kind, name, n, t});
  // Over UCX (where it is installed), at one size: the fault paths are the
  // communicator's, the transport only has to turn a dead peer into an error.
  for (auto [kind, name] : kinds) cases.push_back({kind, name, 4, "ucx"});
#ifdef BRAID_NCCL_NET_PLUGIN_PATH
  // Through an NCCL net plugin (braid's own, over tcp), at one size.
  for (auto [kind, name] : kinds) cases.push_back({kind, name, 4, "netplugin"});
#endif
#ifdef BRAID_FAKE_VERBS_PATH
  // Over ibverbs (on the tests' fake libibverbs), at one size.
  for (auto [kind, name] : kinds) cases.push_back({kind, name, 4, "ibverbs"});
#endif
  // Faults of collectives on the shared slots (links play no part there).
  for (auto [kind, name] : kinds)
    if (kind != Kind::kCloseSocket && kind != Kind::kCorruptHeader) {
      cases.push_back({kind, name, 4, "shm", Case::kWhole});
      // mismatch: the odd rank's all-gather (1 MiB) is the executor's, the
      // others' all-reduce is on the slots: told apart by the announcements.
      cases.push_back({kind, name, 4, "shm", Case::kChunked});
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, Faults, ::testing::ValuesIn(allCases()), [](const auto& info) {
  return std::string(info.param.name) + "_" + std::to_string(info.param.nranks) + "_" + info.param.transport +
         (info.param.slots == Case::kWhole     ? "_slots"
          : info.param.slots == Case::kChunked ? "_slots_chunked"
                                               : "");
});

}  // namespace
}  // namespace braid::itest

// Multi-process harness: runs a test body as N real processes on this machine.
//
// The gtest process (the parent) never calls braid itself, so it stays
// single-threaded and fork() is safe. It forks every rank (and any "sidecar"
// helper) up front; rank 0 then calls braidGetUniqueId (its process hosts the
// root, as the header requires of the caller) and hands the id to the other
// ranks through pipes; every rank calls braidCommInitRankConfig and runs the
// body.
//
// Inside a child, use the ordinary gtest EXPECT_/ASSERT_ macros: a listener
// forwards every failure to the parent through a pipe, where it is reported as
// a failure of the running test, prefixed with the rank. Children always leave
// with _exit() and never return into gtest.
//
// The parent waits on pidfds and pipes (no sleeps) with an outer time limit:
// on expiry it SIGKILLs whatever is still running and fails the test naming
// those ranks. A child that crashes or exits non-zero fails the test with its
// rank and signal. Once one child has failed, the others get a short grace
// period and are then killed, so a broken collective costs seconds, not the
// whole limit.
#pragma once

#include <braid/braid.h>

#include <functional>
#include <string>
#include <vector>

namespace braid::itest {

struct RankContext {
  int rank = 0;
  int nranks = 0;
  braidComm_t comm = nullptr;  // null when RunOptions::init is false
  braidUniqueId id{};
  void* shared = nullptr;  // RunOptions::sharedBytes of MAP_SHARED memory, zeroed
};

// A helper process that is not a rank (e.g. a stranger trying to join).
// fromRoot/toRoot are pipes to and from rank 0's onUniqueId hook.
struct SidecarContext {
  int index = 0;
  int fromRoot = -1;  // read end
  int toRoot = -1;    // write end
};

// What rank 0's onUniqueId hook gets: the id and the pipe ends of each sidecar.
struct RootHookContext {
  braidUniqueId id{};
  std::vector<int> toSidecar;    // write ends, one per sidecar
  std::vector<int> fromSidecar;  // read ends, one per sidecar
};

struct RunOptions {
  int nranks = 1;
  int started = -1;            // ranks actually forked (ranks 0..started-1); <0: all
  int limitSeconds = 60;       // outer limit for the whole run
  int graceSeconds = 3;        // after one child failed, the others get this long
  bool init = true;            // false: the body initialises (ctx.comm is null)
  bool rendezvous = true;      // false: not even braidGetUniqueId (ctx.id is zero)
  int braidTimeoutMs = 20000;  // braidConfig_t::timeoutMs for the harness's init
  size_t sharedBytes = 0;
  // Ranks a fault test kills on purpose: their death by SIGKILL is expected,
  // neither a failure nor a reason to cut the others' grace short.
  std::vector<int> mayBeKilled;
  // Runs in the parent on the zeroed shared memory before any fork (e.g. to
  // sem_init a process-shared semaphore); must not call braid.
  std::function<void(void* shared)> initShared;
  // Runs in rank 0 after braidGetUniqueId, before the id reaches other ranks.
  std::function<void(RootHookContext&)> onUniqueId;
  int sidecars = 0;
  std::function<void(SidecarContext&)> sidecarBody;
};

using RankBody = std::function<void(RankContext&)>;

// Runs body on every rank; reports failures into the current gtest test.
void runRanks(const RunOptions& options, const RankBody& body);

// Convenience: n ranks, default options.
inline void runRanks(int n, const RankBody& body) {
  RunOptions o;
  o.nranks = n;
  runRanks(o, body);
}

// Why the ucx transport cannot run here ("" when it can): braid built without
// it, or no libucp to load. Asked in a child process: loading UCX installs its
// memory hooks, which the test process (the parent of every rank) should not
// carry into its forks.
std::string ucxMissing();

// Blocking full read/write on a pipe, retrying EINTR; false on EOF or error.
bool readFull(int fd, void* data, size_t size);
bool writeFull(int fd, const void* data, size_t size);

}  // namespace braid::itest

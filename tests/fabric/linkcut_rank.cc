// One rank of fabric_linkcut_test, run on every host by `fabric run`: it
// all-reduces in a loop until the test cuts one host's link, reports what
// braid returned and how fast, then (outside the cut host) shrinks to the
// survivors and checks that they compute. It asserts nothing itself: it prints
// one line per fact and exits 0 once it has played its part, so that
// `fabric run` (which stops every rank when one exits non-zero) lets the others
// finish; the test judges the lines. Lines, each on its own:
//   ready rank=R                          warm-up ops verified; cut whenever
//   failed rank=R code=C op=N detect_ms=D in_op_ms=I msg=M
//                                         the op that failed: code, how long
//                                         after the cut it returned, how long
//                                         it had been running at the cut
//   shrunk rank=R new_rank=r size=n ok=1  the survivors' all-reduces verified
//   clean rank=R pid=P threads=T fds=F shm_maps=S shm_names=N
//                                         after destroying every communicator:
//                                         growth of threads and fds since before
//                                         init, braid shm mappings and names left
//   error rank=R what=W                   something that should not happen
//
// Usage: linkcut_rank CUT_HOST DIR. Ranks are laid out as `fabric run` does
// (host = rank / LOCAL_WORLD_SIZE). The test writes DIR/cut holding the
// CLOCK_MONOTONIC time (ns) taken just before it cut the link; the clock is the
// machine's, shared by every network namespace.
#include <braid/braid.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/common/process_census.h"

namespace {

// 8 MiB of int32: over 100 ms per op at 1 Gbit/s, long against the tens of
// ms that `fabric link` takes to cut once the test has taken the time, so the
// cut lands inside an op rather than after the one in flight completed.
constexpr size_t kCount = 2 * 1024 * 1024;
constexpr int kWarmupOps = 3;
constexpr int64_t kMaxLoopNs = 60'000'000'000;  // no cut by then: give up (the test's limit is shorter)
constexpr int64_t kCutFileWaitNs = 10'000'000'000;

int64_t monoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

using braid::test::countEntries;

int shmMappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("braid-shm-") != std::string::npos;
  return n;
}

std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// The cut time the test wrote; polled with a deadline because a rank may fail
// before the test has written it (the file follows the cut command).
int64_t readCutNs(const std::string& dir) {
  for (const int64_t until = monoNs() + kCutFileWaitNs; monoNs() < until;) {
    std::ifstream in(dir + "/cut");
    int64_t ns = 0;
    if (in >> ns && ns > 0) return ns;
    usleep(10'000);  // a bounded poll for a file, not a synchronisation
  }
  return 0;
}

// What rank `rank` contributes at element i; summed over `ranks`, that is
// sum(r + 1) + |ranks| * (i % 13).
int32_t value(int rank, size_t i) { return rank + 1 + static_cast<int32_t>(i % 13); }

// One verified all-reduce; ranks: the parent ranks of every member.
bool verifiedAllReduce(braidComm_t comm, int me, const std::vector<int>& ranks, size_t count,
                       braidResult_t* rc) {
  std::vector<int32_t> in(count), out(count, 0);
  for (size_t i = 0; i < count; ++i) in[i] = value(me, i);
  *rc = braidAllReduce(in.data(), out.data(), count, braidInt32, braidSum, comm, nullptr);
  if (*rc != braidSuccess) return false;
  int32_t base = 0;
  for (int r : ranks) base += r + 1;
  const int32_t members = static_cast<int32_t>(ranks.size());
  for (size_t i = 0; i < count; ++i)
    if (out[i] != base + members * static_cast<int32_t>(i % 13)) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::getenv("LOCAL_WORLD_SIZE") == nullptr) {
    std::fprintf(stderr, "usage: linkcut_rank CUT_HOST DIR (under `fabric run`)\n");
    return 2;
  }
  const int cutHost = std::atoi(argv[1]);
  const std::string dir = argv[2];
  const int perHost = std::atoi(std::getenv("LOCAL_WORLD_SIZE"));
  const int threadsBefore = countEntries("/proc/self/task"), fdsBefore = countEntries("/proc/self/fd");

  braidComm_t comm = nullptr;
  if (braidCommInitFromEnv(&comm, nullptr) != braidSuccess) {
    say("error rank=? what=init: " + oneLine(braidGetLastError(nullptr)));
    return 1;
  }
  int me = 0, n = 0;
  braidCommUserRank(comm, &me);
  braidCommCount(comm, &n);
  const std::string tag = "rank=" + std::to_string(me);
  const bool onCutHost = me / perHost == cutHost;
  std::vector<int> all, survivors, excluded;
  for (int r = 0; r < n; ++r) {
    all.push_back(r);
    (r / perHost == cutHost ? excluded : survivors).push_back(r);
  }

  // All-reduce until one fails: the cut lands inside one of them (the loop
  // spends all but a verification pass of a few ms in the collective).
  braidResult_t rc = braidSuccess;
  int op = 0;
  int64_t opStart = 0;
  for (const int64_t until = monoNs() + kMaxLoopNs; monoNs() < until; ++op) {
    opStart = monoNs();
    if (!verifiedAllReduce(comm, me, all, kCount, &rc)) break;
    if (op + 1 == kWarmupOps) say("ready " + tag);
  }
  const int64_t failedAt = monoNs();
  if (rc == braidSuccess) {  // the loop ran out, or an op returned a wrong sum
    say("error " + tag + " what=no failure, or a wrong sum, by op " + std::to_string(op));
    return 1;
  }
  const std::string msg = oneLine(braidGetLastError(comm));
  const int64_t cutNs = readCutNs(dir);
  if (cutNs == 0) {
    say("error " + tag + " what=failed before any cut: code=" + std::to_string(rc) + " " + msg);
    return 1;
  }
  say("failed " + tag + " code=" + std::to_string(rc) + " op=" + std::to_string(op) +
      " detect_ms=" + std::to_string((failedAt - cutNs) / 1'000'000) +
      " in_op_ms=" + std::to_string((cutNs - opStart) / 1'000'000) + " msg=" + msg);

  int status = 0;
  if (!onCutHost) {
    braidComm_t shrunk = nullptr;
    if (braidCommShrink(comm, excluded.data(), static_cast<int>(excluded.size()), &shrunk) != braidSuccess) {
      say("error " + tag + " what=shrink: " + oneLine(braidGetLastError(comm)));
      status = 1;
    } else {
      int newRank = -1, size = 0;
      braidCommUserRank(shrunk, &newRank);
      braidCommCount(shrunk, &size);
      // A small and a chunked count, twice each: the new communicator keeps working.
      bool ok = true;
      for (size_t count : {size_t{1}, kCount, size_t{1}, kCount})
        ok = ok && verifiedAllReduce(shrunk, me, survivors, count, &rc);
      say((ok ? "shrunk " : "error ") + tag + " new_rank=" + std::to_string(newRank) +
          " size=" + std::to_string(size) +
          (ok ? " ok=1" : " what=all-reduce after shrink: " + oneLine(braidGetLastError(shrunk))));
      if (braidCommDestroy(shrunk) != braidSuccess)
        say("error " + tag + " what=destroying the shrunk communicator");
      status = ok ? 0 : 1;
    }
  }
  if (braidCommDestroy(comm) != braidSuccess)
    say("error " + tag + " what=destroying the failed communicator");
  say("clean " + tag + " pid=" + std::to_string(getpid()) +
      " threads=" + std::to_string(braid::test::threadsOnceJoinedAreGone(threadsBefore) - threadsBefore) +
      " fds=" + std::to_string(countEntries("/proc/self/fd") - fdsBefore) +
      " shm_maps=" + std::to_string(shmMappings()) + " shm_names=" +
      std::to_string(countEntries("/dev/shm", "braid-shm-" + std::to_string(getpid()) + "-")));
  return status;
}

// Where the ranks' stream threads run (BRAID_BIND unset): each rank's keeps
// to its own share of the CPUs the ranks share, so two ranks' progress
// threads never take turns on one core (topo/bind_policy.h's engineCpuShare).
// Read from /proc: the Cpus_allowed_list of this process's braid-stream
// threads, after a collective on a stream has run.
#include <braid/braid.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "harness.h"

namespace braid::itest {
namespace {

// "0-2,5" -> bits 0, 1, 2 and 5 (CPUs below 64; 0 when any is above).
uint64_t maskOf(const std::string& list) {
  uint64_t mask = 0;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    const size_t dash = item.find('-');
    const int lo = std::stoi(item.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(item.substr(dash + 1));
    if (hi >= 64) return 0;
    for (int c = lo; c <= hi; ++c) mask |= uint64_t{1} << c;
  }
  return mask;
}

// The CPUs this process's braid-stream threads may run on, united (0: none found).
uint64_t streamThreadCpus() {
  uint64_t mask = 0;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return 0;
  while (dirent* e = readdir(dir)) {
    const std::string task = std::string("/proc/self/task/") + e->d_name;
    std::ifstream comm(task + "/comm");
    std::string name;
    if (!std::getline(comm, name) || name != "braid-stream") continue;
    std::ifstream status(task + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Cpus_allowed_list:", 0) == 0)
        mask |= maskOf(line.substr(line.find_first_not_of(" \t", 18)));
  }
  closedir(dir);
  return mask;
}

int processCpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

TEST(EngineBinding, TwoRanksStreamThreadsKeepToDisjointShares) {
  if (processCpus() < 2) GTEST_SKIP() << "needs 2 CPUs to split";
  RunOptions o;
  o.nranks = 2;
  o.sharedBytes = 2 * sizeof(uint64_t);
  o.limitSeconds = 60;
  runRanks(o, [](RankContext& ctx) {
    unsetenv("BRAID_BIND");  // read at the stream thread's first op
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    int32_t in = 1, out = 0;
    ASSERT_EQ(braidAllReduce(&in, &out, 1, braidInt32, braidSum, ctx.comm, stream), braidSuccess);
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess);
    EXPECT_EQ(out, 2);
    auto* masks = static_cast<uint64_t*>(ctx.shared);
    masks[ctx.rank] = streamThreadCpus();
    ASSERT_EQ(braidBarrier(ctx.comm, nullptr), braidSuccess);  // both masks written
    EXPECT_NE(masks[ctx.rank], 0u) << "no braid-stream thread found";
    EXPECT_EQ(masks[0] & masks[1], 0u) << "rank 0's stream thread may run on CPUs " << masks[0]
                                       << ", rank 1's on " << masks[1] << " (bit masks): they overlap";
    ASSERT_EQ(braidStreamDestroy(stream), braidSuccess);
  });
}

}  // namespace
}  // namespace braid::itest

// Binding near a NIC / NUMA node, each case on its own thread so the test
// process keeps its affinity.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <thread>

#include "test_util.h"
#include "topo/bind.h"
#include "topo/detect.h"

namespace braid::topo {
namespace {

using testing::dgx;
using testing::ScopedEnv;

CpuList threadAffinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return CpuList(cpus);
}

template <typename F>
void onThread(F f) {
  std::thread t(f);
  t.join();
}

TEST(TopoBind, OffByDefault) {
  ScopedEnv bind("BRAID_BIND", std::nullopt);
  EXPECT_FALSE(bindingEnabled());
  onThread([] {
    CpuList before = threadAffinity(), bound({99});
    EXPECT_TRUE(bindThreadNearNuma(dgx(), 1, &bound).isOk());
    EXPECT_TRUE(bound.empty());
    EXPECT_EQ(threadAffinity(), before);
  });
}

TEST(TopoBind, BindsNearThisHostsNumaNodeAndNic) {
  ScopedEnv bind("BRAID_BIND", std::string("1"));
  HostTopology h;
  ASSERT_TRUE(detectTopology(&h).isOk());
  onThread([&] {
    CpuList bound;
    Status st = bindThreadNearNuma(h, h.numaNodes[0].id, &bound);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_FALSE(bound.empty());
    EXPECT_TRUE(h.numaNodes[0].cpus.containsAll(bound));
    EXPECT_EQ(threadAffinity(), bound);
  });
  onThread([&] {
    CpuList bound;
    Status st = bindThreadNearNic(h, h.nics[0].name, &bound);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(threadAffinity(), bound);
  });
}

TEST(TopoBind, RefusesWhatCannotBeBound) {
  ScopedEnv bind("BRAID_BIND", std::string("1"));
  HostTopology h = dgx();
  // Move NUMA node 1 beyond this box's CPUs: nothing there can be used.
  h.numaNodes[1].cpus = CpuList({4000, 4001});
  onThread([&] {
    CpuList before = threadAffinity(), bound;
    Status st = bindThreadNearNuma(h, 1, &bound);
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    EXPECT_NE(st.message().find("4000-4001"), std::string::npos) << st.message();
    EXPECT_EQ(threadAffinity(), before);
    EXPECT_EQ(bindThreadNearNic(h, "mlx5_9", &bound).code(), Code::kInvalidArgument);
    EXPECT_EQ(bindThreadNearNuma(h, 5, &bound).code(), Code::kInvalidArgument);
  });
}

}  // namespace
}  // namespace braid::topo

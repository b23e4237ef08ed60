// BRAID_SOCKET_TC: every TCP data socket of a communicator carries the traffic
// class (both ends: the connector's and the acceptor's), and none does
// without it. Read back from the kernel (tests/common/socket_traffic_classes.h).
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "harness.h"
#include "tests/common/socket_traffic_classes.h"

namespace braid::itest {
namespace {

constexpr int kClass = 0xb8;  // DSCP 46 (EF) << 2

// Connected TCP sockets of this rank marked kClass, after an all-reduce over
// TCP (every pair connected, both ways).
void expectMarkedSockets(const char* socketTc, bool marked) {
  RunOptions o;
  o.nranks = 3;
  o.init = false;
  o.limitSeconds = 60;
  runRanks(o, [socketTc, marked](RankContext& ctx) {
    setenv("BRAID_TRANSPORT", "tcp", 1);
    if (socketTc) setenv("BRAID_SOCKET_TC", socketTc, 1);
    ASSERT_EQ(braidCommInitRank(&ctx.comm, ctx.nranks, ctx.id, ctx.rank), braidSuccess)
        << braidGetLastError(nullptr);
    float value = 1, sum = 0;
    ASSERT_EQ(braidAllReduce(&value, &sum, 1, braidFloat32, braidSum, ctx.comm, nullptr), braidSuccess);
    EXPECT_EQ(sum, 3.0f);
    std::map<int, int> classes = test::connectedTcpTrafficClasses();
    // A pair's connection is 1 socket on one host, one each way: 2 per peer.
    if (marked)
      EXPECT_GE(classes[kClass], 2 * (ctx.nranks - 1)) << "rank " << ctx.rank;
    else
      EXPECT_EQ(classes[kClass], 0) << "rank " << ctx.rank;
  });
}

TEST(SocketTrafficClass, MarksEveryDataSocketOfTheCommunicator) { expectMarkedSockets("184", true); }

TEST(SocketTrafficClass, LeavesTheSystemsClassWhenUnset) { expectMarkedSockets(nullptr, false); }

}  // namespace
}  // namespace braid::itest

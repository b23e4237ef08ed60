// BRAID_SOCKET_TC reaches a communicator's TCP transport: its INFO line
// names the class, and there is none without the variable. That the
// transport then marks every data socket, both ends, is read back from the
// kernel in its own test (TcpTransport.SocketsCarryTheOptionsTrafficClass);
// here the ranks' bootstrap threads open and close descriptors meanwhile, so
// a scan of the process's sockets would race with them.
#include <braid/braid.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "harness.h"

namespace braid::itest {
namespace {

// Runs 3 ranks over TCP with BRAID_SOCKET_TC = socketTc (null: unset) and
// reads each rank's INFO log after an all-to-all. The variables are set here,
// before the ranks fork: rank 0's logging starts with braidGetUniqueId.
void expectTransportsClass(const char* socketTc, const char* expected) {
  setenv("BRAID_TRANSPORT", "tcp", 1);
  setenv("BRAID_DEBUG", "INFO", 1);
  setenv("BRAID_DEBUG_FILE", "/tmp/braid-tc-test-%p.log", 1);
  if (socketTc) setenv("BRAID_SOCKET_TC", socketTc, 1);
  RunOptions o;
  o.nranks = 3;
  o.limitSeconds = 60;
  runRanks(o, [expected](RankContext& ctx) {
    const std::string log = "/tmp/braid-tc-test-" + std::to_string(getpid()) + ".log";
    int32_t out[3] = {}, in[3] = {ctx.rank, ctx.rank, ctx.rank};
    ASSERT_EQ(braidAllToAll(in, out, 1, braidInt32, ctx.comm, nullptr), braidSuccess);
    for (int p = 0; p < 3; ++p) EXPECT_EQ(out[p], p);
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    unlink(log.c_str());
    EXPECT_NE(text.str().find("tcp: listening on"), std::string::npos)
        << "rank " << ctx.rank << ": " << text.str();
    if (expected)
      EXPECT_NE(text.str().find(expected), std::string::npos) << "rank " << ctx.rank << ": " << text.str();
    else
      EXPECT_EQ(text.str().find("traffic class"), std::string::npos)
          << "rank " << ctx.rank << ": " << text.str();
  });
  for (const char* name : {"BRAID_TRANSPORT", "BRAID_DEBUG", "BRAID_DEBUG_FILE", "BRAID_SOCKET_TC"})
    unsetenv(name);
}

TEST(SocketTrafficClass, ReachesTheCommunicatorsTransport) {
  expectTransportsClass("184", "every data socket carries traffic class 0xb8");
}

TEST(SocketTrafficClass, NoneWhenUnset) { expectTransportsClass(nullptr, nullptr); }

}  // namespace
}  // namespace braid::itest

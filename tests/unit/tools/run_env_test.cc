#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <set>
#include <string>
#include <vector>

#include "exit_status.h"
#include "rank_env.h"
#include "rendezvous.h"

namespace braid::run {
namespace {

bool has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

TEST(RankEnv, SetsBraidAndTorchrunVariables) {
  const Rendezvous rv{"127.0.0.1", 29500, "00112233445566778899aabbccddeeff"};
  const std::vector<std::string> env = buildRankEnv({"PATH=/bin", "HOME=/root"}, 2, 4, rv);
  for (const char* e :
       {"PATH=/bin", "HOME=/root", "BRAID_RANK=2", "BRAID_WORLD_SIZE=4", "BRAID_ROOT_ADDR=127.0.0.1:29500",
        "BRAID_SECRET=00112233445566778899aabbccddeeff", "RANK=2", "WORLD_SIZE=4", "LOCAL_RANK=2",
        "LOCAL_WORLD_SIZE=4", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500"}) {
    EXPECT_TRUE(has(env, e)) << e;
  }
  EXPECT_EQ(env.size(), 12u);
}

TEST(RankEnv, ReplacesInheritedAndForeignLauncherVariables) {
  const Rendezvous rv{"::1", 1234, "ab"};
  const std::vector<std::string> env =
      buildRankEnv({"BRAID_RANK=9", "RANK=9", "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8",
                    "PMI_RANK=1", "SLURM_PROCID=5", "SLURM_JOB_ID=77", "BRAID_DEBUG=INFO"},
                   0, 1, rv);
  EXPECT_TRUE(has(env, "BRAID_RANK=0"));
  EXPECT_TRUE(has(env, "RANK=0"));
  EXPECT_FALSE(has(env, "BRAID_RANK=9"));
  EXPECT_FALSE(has(env, "RANK=9"));
  EXPECT_FALSE(has(env, "OMPI_COMM_WORLD_RANK=3"));
  EXPECT_FALSE(has(env, "OMPI_COMM_WORLD_SIZE=8"));
  EXPECT_FALSE(has(env, "PMI_RANK=1"));
  EXPECT_FALSE(has(env, "SLURM_PROCID=5"));
  EXPECT_TRUE(has(env, "SLURM_JOB_ID=77"));  // not about ranks: kept
  EXPECT_TRUE(has(env, "BRAID_DEBUG=INFO"));
  EXPECT_TRUE(has(env, "BRAID_ROOT_ADDR=[::1]:1234"));
  EXPECT_TRUE(has(env, "MASTER_ADDR=::1"));
}

TEST(Rendezvous, SecretIs32FreshHexDigits) {
  std::string error;
  const std::string a = generateSecret(&error);
  const std::string b = generateSecret(&error);
  ASSERT_EQ(a.size(), 32u) << error;
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
  const uint8_t bytes[] = {0x00, 0x0f, 0xa5, 0xff};
  EXPECT_EQ(toHex(bytes, 4), "000fa5ff");
}

TEST(Rendezvous, PicksAPortOnLoopback) {
  std::string error;
  const int port = pickFreePort("127.0.0.1", &error);
  EXPECT_GT(port, 0) << error;
  EXPECT_LT(port, 65536);
  EXPECT_EQ(pickFreePort("no.such.host.invalid", &error), 0);
  EXPECT_NE(error.find("no.such.host.invalid"), std::string::npos);
}

TEST(ExitStatus, DescribesExitsAndSignals) {
  const int exited3 = 3 << 8;  // as wait(2) encodes exit(3)
  EXPECT_TRUE(WIFEXITED(exited3));
  EXPECT_EQ(describeWaitStatus(exited3), "exited with code 3");
  EXPECT_FALSE(waitStatusOk(exited3));
  EXPECT_EQ(exitCodeFor(exited3), 3);
  EXPECT_TRUE(waitStatusOk(0));

  const int killed = SIGKILL;  // terminated by SIGKILL, no core
  EXPECT_TRUE(WIFSIGNALED(killed));
  EXPECT_EQ(describeWaitStatus(killed), "was killed by signal 9 (SIGKILL)");
  EXPECT_FALSE(waitStatusOk(killed));
  EXPECT_EQ(exitCodeFor(killed), 137);
}

}  // namespace
}  // namespace braid::run

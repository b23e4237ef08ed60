// braidCommInitFromEnv's reading of launcher conventions, fed from a map.
#include <gtest/gtest.h>

#include <map>

#include "core/launcher_env.h"

namespace braid::core {
namespace {

Status read(const std::map<std::string, std::string>& vars, LauncherEnv* env) {
  return readLauncherEnv(
      [&](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
      },
      env);
}

TEST(LauncherEnv, Torchrun) {
  LauncherEnv env;
  ASSERT_TRUE(read({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}}, &env).isOk());
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.nranks, 8);
  EXPECT_EQ(env.rootAddress, "node0:29500");
  EXPECT_EQ(env.source, "torchrun");
  EXPECT_FALSE(env.hasSecret);
}

TEST(LauncherEnv, OpenMpiPmiSlurmAndIpv6Master) {
  LauncherEnv env;
  ASSERT_TRUE(read({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"MASTER_ADDR", "::1"}, {"MASTER_PORT", "7"}}, &env).isOk());
  EXPECT_EQ(env.source, "Open MPI");
  EXPECT_EQ(env.rootAddress, "[::1]:7");
  ASSERT_TRUE(read({{"PMI_RANK", "0"}, {"PMI_SIZE", "4"}, {"BRAID_ROOT_ADDR", "10.1.1.1:5"}}, &env).isOk());
  EXPECT_EQ(env.source, "PMI");
  EXPECT_EQ(env.rootAddress, "10.1.1.1:5");
  ASSERT_TRUE(read({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"BRAID_ROOT_ADDR", "h:1"}}, &env).isOk());
  EXPECT_EQ(env.source, "SLURM");
  EXPECT_EQ(env.rank, 5);
}

TEST(LauncherEnv, BraidVariablesWinAndSecretParses) {
  LauncherEnv env;
  ASSERT_TRUE(read({{"BRAID_RANK", "1"}, {"BRAID_WORLD_SIZE", "3"}, {"RANK", "0"}, {"WORLD_SIZE", "9"},
                    {"BRAID_ROOT_ADDR", "127.0.0.1:4000"}, {"BRAID_SECRET", "000102030405060708090a0b0c0d0eff"}},
                   &env).isOk());
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.nranks, 3);
  ASSERT_TRUE(env.hasSecret);
  EXPECT_EQ(env.secret[1], 1);
  EXPECT_EQ(env.secret[15], 0xff);
}

TEST(LauncherEnv, ClearErrors) {
  LauncherEnv env;
  Status none = read({}, &env);
  EXPECT_EQ(none.code(), Code::kInvalidArgument);
  EXPECT_NE(none.message().find("WORLD_SIZE"), std::string::npos);
  EXPECT_EQ(read({{"RANK", "4"}, {"WORLD_SIZE", "4"}, {"BRAID_ROOT_ADDR", "h:1"}}, &env).code(), Code::kInvalidArgument);
  EXPECT_EQ(read({{"RANK", "x"}, {"WORLD_SIZE", "4"}, {"BRAID_ROOT_ADDR", "h:1"}}, &env).code(), Code::kInvalidArgument);
  Status noAddr = read({{"RANK", "0"}, {"WORLD_SIZE", "4"}}, &env);
  EXPECT_EQ(noAddr.code(), Code::kInvalidArgument);
  EXPECT_NE(noAddr.message().find("MASTER_ADDR"), std::string::npos);
  EXPECT_EQ(read({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"BRAID_ROOT_ADDR", "h:1"}, {"BRAID_SECRET", "abc"}}, &env).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(read({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"BRAID_ROOT_ADDR", "h:1"},
                  {"BRAID_SECRET", "zz0102030405060708090a0b0c0d0eff"}}, &env).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace braid::core

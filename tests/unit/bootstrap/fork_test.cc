// Ranks as real processes, and a process that forks after starting a root.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace braid::bootstrap {
namespace {

constexpr const char* kIdVar = "BRAID_TEST_BOOTSTRAP_ID";

std::string toHex(const uint8_t* bytes, size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

bool fromHex(const std::string& hex, uint8_t* bytes, size_t size) {
  if (hex.size() != 2 * size) return false;
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return true;
}

// Rank 0 here, rank 1 in a fresh process running Processes.DISABLED_ChildRank.
TEST(Processes, RankInAnotherProcess) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  uint8_t packed[UniqueId::kBytes];
  id.pack(packed);

  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back(std::string(kIdVar) + "=" + toHex(packed, sizeof(packed)));
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe", filter = "--gtest_filter=Processes.DISABLED_ChildRank",
              disabled = "--gtest_also_run_disabled_tests";
  char* argv[] = {self.data(), filter.data(), disabled.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);

  std::unique_ptr<Bootstrap> b;
  Status st = Bootstrap::create(id, 0, 2, 10000, &b);
  EXPECT_TRUE(st.isOk()) << st.message();
  if (st.isOk()) {
    int slots[2] = {10, -1};
    EXPECT_TRUE(b->allGather(slots, sizeof(int)).isOk());
    EXPECT_EQ(slots[1], 11);
    EXPECT_NE(b->address(1).port(), 0);
    EXPECT_TRUE(b->barrier().isOk());
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child rank's checks failed (its output is above)";
}

// Not run on its own: Processes.RankInAnotherProcess runs it in a child process.
TEST(Processes, DISABLED_ChildRank) {
  const char* hex = std::getenv(kIdVar);
  ASSERT_NE(hex, nullptr) << "run by Processes.RankInAnotherProcess";
  uint8_t packed[UniqueId::kBytes];
  ASSERT_TRUE(fromHex(hex, packed, sizeof(packed)));
  UniqueId id;
  ASSERT_TRUE(UniqueId::unpack(packed, &id).isOk());
  std::unique_ptr<Bootstrap> b;
  Status st = Bootstrap::create(id, 1, 2, 10000, &b);
  ASSERT_TRUE(st.isOk()) << st.message();
  int slots[2] = {-1, 11};
  ASSERT_TRUE(b->allGather(slots, sizeof(int)).isOk());
  EXPECT_EQ(slots[0], 10);
  EXPECT_TRUE(b->barrier().isOk());
}

// A child inherits the parent's root registry but not its threads: the roots
// are not the child's (it must not count, stop or join them: joining a thread
// of another process is undefined), and the parent's root must be unaffected.
// The child starts no threads.
TEST(Fork, ChildDoesNotOwnItsParentsRoots) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);  // a hung child dies and fails the test instead of hanging it
    // What the registry's destructor does at exit. _exit then, because leak
    // checkers misreport in a forked child (the parent's threads are missing).
    if (runningRoots() != 0) _exit(3);
    stopAllRoots();
    _exit(runningRoots() == 0 ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto joined = testing::joinAll(id, {{0, 1}}, 5000);
  EXPECT_TRUE(joined[0].status.isOk()) << joined[0].status.message();
}

}  // namespace
}  // namespace braid::bootstrap

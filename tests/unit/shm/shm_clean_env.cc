// Around the tests of this binary (ctest runs each test as its own process,
// so around each test): /dev/shm holds no entry of ours afterwards. Segments
// are unlinked right after creation, so not even a crashed test leaves one.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "shm_test_util.h"

namespace braid::transport::testing {
namespace {

class NoShmLeftovers : public ::testing::Environment {
  void SetUp() override { before_ = shmEntries(); }
  void TearDown() override {
    for (const std::string& name : shmEntries()) {
      // Segments are named braid-shm-<creator pid>-<random>. One of another
      // live process (a test running beside this one) is in flight, not left.
      const int pid = std::atoi(name.c_str() + std::strlen(shm::kNamePrefix));
      if (pid > 0 && pid != getpid() && kill(pid, 0) == 0) continue;
      EXPECT_NE(std::find(before_.begin(), before_.end(), name), before_.end()) << "left in /dev/shm: " << name;
    }
  }
  std::vector<std::string> before_;
};

[[maybe_unused]] ::testing::Environment* const kEnv = ::testing::AddGlobalTestEnvironment(new NoShmLeftovers);

}  // namespace
}  // namespace braid::transport::testing

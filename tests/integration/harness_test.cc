// The harness itself: a failure, crash, odd exit or hang in any child must
// fail the test, naming the rank. No braid calls here (rendezvous off).
#include "harness.h"

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>

namespace braid::itest {
namespace {

RunOptions bare(int n, int limitSeconds) {
  RunOptions o;
  o.nranks = n;
  o.rendezvous = false;
  o.limitSeconds = limitSeconds;
  return o;
}

void failOnRank1() {
  runRanks(bare(3, 10), [](RankContext& c) {
    if (c.rank == 1) ADD_FAILURE() << "boom from the child";
  });
}
void crashOnRank2() {
  runRanks(bare(3, 10), [](RankContext& c) {
    // SIGABRT rather than SIGSEGV: AddressSanitizer turns a SIGSEGV into exit(1).
    if (c.rank == 2) raise(SIGABRT);
  });
}
void exitOnRank0() {
  runRanks(bare(2, 10), [](RankContext& c) {
    if (c.rank == 0) _exit(3);
  });
}
void hangOnRank1() {
  runRanks(bare(2, 1), [](RankContext& c) {
    if (c.rank == 1) pause();  // only SIGKILL ends it
  });
}
void failThenHang() {
  RunOptions o = bare(2, 60);
  o.graceSeconds = 1;
  runRanks(o, [](RankContext& c) {
    if (c.rank == 0) FAIL() << "rank 0 gives up";
    pause();
  });
}

// The failures f() reports into the current test, captured instead.
std::string captureFailures(void (*f)()) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    f();
  }
  std::string all;
  for (int i = 0; i < results.size(); ++i) all += std::string(results.GetTestPartResult(i).message()) + "\n";
  return all;
}

using ::testing::HasSubstr;

TEST(Harness, ReportsChildFailureWithRank) {
  std::string f = captureFailures(failOnRank1);
  EXPECT_THAT(f, HasSubstr("[rank 1]"));
  EXPECT_THAT(f, HasSubstr("boom from the child"));
  EXPECT_THAT(f, ::testing::Not(HasSubstr("[rank 0]")));
}
TEST(Harness, ReportsCrashWithSignal) {
  EXPECT_THAT(captureFailures(crashOnRank2), HasSubstr("rank 2 died with signal 6"));
}
TEST(Harness, ReportsNonZeroExit) {
  EXPECT_THAT(captureFailures(exitOnRank0), HasSubstr("rank 0 exited with status 3"));
}
TEST(Harness, KillsAtTheLimitNamingTheRank) {
  EXPECT_THAT(captureFailures(hangOnRank1), HasSubstr("1 s limit; still running: rank 1"));
}
TEST(Harness, KillsTheRestAfterAFailure) {
  auto t0 = std::chrono::steady_clock::now();
  std::string f = captureFailures(failThenHang);
  EXPECT_THAT(f, HasSubstr("rank 0 gives up"));
  EXPECT_THAT(f, HasSubstr("1 s of grace after rank 0 failed; still running: rank 1"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
}
TEST(Harness, CleanRunReportsNothing) {
  EXPECT_EQ(captureFailures([] { runRanks(bare(4, 10), [](RankContext&) {}); }), "");
}

// A process-shared semaphore in the shared page (std::atomic::wait would use a
// process-private futex): rank 1 passes only once rank 0 has posted into it.
TEST(Harness, SharedMemoryIsShared) {
  RunOptions p = bare(2, 10);
  p.sharedBytes = 4096;
  p.initShared = [](void* shared) { ASSERT_EQ(sem_init(static_cast<sem_t*>(shared), 1, 0), 0); };
  runRanks(p, [](RankContext& c) {
    auto* sem = static_cast<sem_t*>(c.shared);
    auto* value = reinterpret_cast<int*>(static_cast<char*>(c.shared) + 1024);
    if (c.rank == 0) {
      *value = 42;
      ASSERT_EQ(sem_post(sem), 0);
    } else {
      while (sem_wait(sem) != 0) ASSERT_EQ(errno, EINTR);
      EXPECT_EQ(*value, 42);
    }
  });
}

}  // namespace
}  // namespace braid::itest

// braid-run end to end, on small shell programs standing in for ranks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Outcome {
  int exitCode = -1;  // braid-run's exit code, or -signal
  std::string out, err;
  double seconds = 0;
};

class BraidRun {
 public:
  explicit BraidRun(const std::vector<std::string>& args) {
    int out[2], err[2];
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
    start_ = std::chrono::steady_clock::now();
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      std::vector<char*> argv{const_cast<char*>(BRAID_RUN_PATH)};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(BRAID_RUN_PATH, argv.data());
      _exit(126);
    }
    close(out[1]);
    close(err[1]);
    fds_[0] = out[0];
    fds_[1] = err[0];
  }

  pid_t pid() const { return pid_; }

  // Reads stdout until it holds n lines (or EOF).
  void waitForLines(size_t n) {
    while (std::count(o_.out.begin(), o_.out.end(), '\n') < static_cast<long>(n) && pump()) {
    }
  }

  Outcome finish() {
    while (pump()) {
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    o_.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    o_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return o_;
  }

 private:
  // One poll round over the open pipes; false once both are at EOF.
  bool pump() {
    pollfd p[2];
    int n = 0;
    for (int fd : fds_) {
      if (fd >= 0) p[n++] = {fd, POLLIN, 0};
    }
    if (n == 0) return false;
    if (poll(p, n, 20000) <= 0) return false;  // outer guard; ctest's timeout is the real one
    for (int i = 0; i < n; ++i) {
      if (!p[i].revents) continue;
      char buf[4096];
      ssize_t got = read(p[i].fd, buf, sizeof(buf));
      int& fd = p[i].fd == fds_[0] ? fds_[0] : fds_[1];
      std::string& dst = p[i].fd == fds_[0] ? o_.out : o_.err;
      if (got <= 0) {
        close(fd);
        fd = -1;
      } else {
        dst.append(buf, static_cast<size_t>(got));
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  Outcome o_;
  std::chrono::steady_clock::time_point start_;
};

Outcome run(const std::vector<std::string>& args) { return BraidRun(args).finish(); }

// "[r]". Appends rather than "[" + ...: GCC 12 warns falsely (-Wrestrict) on
// a literal plus a temporary string at -O3.
std::string tag(int r) {
  std::string s("[");
  s += std::to_string(r);
  s += "]";
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

TEST(BraidRunLaunch, EveryRankGetsItsRendezvousEnvironment) {
  Outcome o = run({"-n", "3", "--", "sh", "-c",
                   "echo \"$BRAID_RANK $BRAID_WORLD_SIZE $RANK $WORLD_SIZE $LOCAL_RANK "
                   "${#BRAID_SECRET} $BRAID_SECRET $BRAID_ROOT_ADDR $MASTER_ADDR:$MASTER_PORT\""});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  std::vector<std::string> l = lines(o.out);
  std::sort(l.begin(), l.end());
  ASSERT_EQ(l.size(), 3u) << o.out;
  std::string secret, addr;
  for (int r = 0; r < 3; ++r) {
    std::istringstream in(l[r]);
    std::string prefix, rank, size, trank, tsize, local, len, sec, root, master;
    in >> prefix >> rank >> size >> trank >> tsize >> local >> len >> sec >> root >> master;
    EXPECT_EQ(prefix, tag(r));
    EXPECT_EQ(rank, std::to_string(r));
    EXPECT_EQ(trank, rank);
    EXPECT_EQ(local, rank);
    EXPECT_EQ(size, "3");
    EXPECT_EQ(tsize, "3");
    EXPECT_EQ(len, "32");
    EXPECT_EQ(root, master);
    EXPECT_EQ(root.rfind("127.0.0.1:", 0), 0u) << root;
    if (r == 0) {
      secret = sec;
      addr = root;
    }
    EXPECT_EQ(sec, secret);  // one secret and one root per job
    EXPECT_EQ(root, addr);
  }
}

// The CPUs this process may run on, as the kernel lists them ("0-1", "3").
std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

TEST(BraidRunLaunch, BindToCorePinsRankRToTheRthAllowedCpu) {
  // Each rank prints the CPU list the kernel holds for it (every thread it
  // starts inherits that list).
  const int n = 3;
  Outcome o = run({"-n", std::to_string(n), "--bind-to", "core", "--", "sh", "-c",
                   "echo $BRAID_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  const std::vector<int> cpus = allowedCpus();
  ASSERT_FALSE(cpus.empty());
  std::vector<std::string> l = lines(o.out);
  std::sort(l.begin(), l.end());
  ASSERT_EQ(l.size(), static_cast<size_t>(n)) << o.out;
  for (int r = 0; r < n; ++r) {
    std::istringstream in(l[r]);
    std::string prefix, rank, list;
    in >> prefix >> rank >> list;
    EXPECT_EQ(rank, std::to_string(r));
    EXPECT_EQ(list, std::to_string(cpus[r % cpus.size()])) << "rank " << r << ": " << l[r];
  }
  // Without it, a rank keeps everything braid-run may use.
  Outcome free = run({"-n", "1", "--", "sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2"});
  ASSERT_EQ(free.exitCode, 0) << free.err;
  ASSERT_FALSE(lines(free.out).empty()) << free.err;
  std::istringstream in(lines(free.out)[0]);
  std::string prefix, list;
  in >> prefix >> list;
  if (cpus.size() > 1) {
    EXPECT_NE(list, std::to_string(cpus[0])) << "an unbound rank was pinned: " << free.out;
  }
}

TEST(BraidRunLaunch, LinesOfDifferentRanksNeverInterleave) {
  const std::string pad(150, 'x');
  Outcome o = run({"-n", "4", "sh", "-c",
                   "i=0; while [ $i -lt 300 ]; do echo \"r$RANK-$i-" + pad + "\"; i=$((i+1)); done"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  std::vector<int> next(4, 0);
  int count = 0;
  for (const std::string& l : lines(o.out)) {
    ++count;
    ASSERT_EQ(l.size() > 4 && l[0] == '[' && l[2] == ']', true) << l;
    const int r = l[1] - '0';
    ASSERT_TRUE(r >= 0 && r < 4) << l;
    // Each rank's lines arrive whole and in order.
    std::string want = tag(r);
    want += " r" + std::to_string(r) + "-" + std::to_string(next[r]) + "-" + pad;
    ASSERT_EQ(l, want);
    ++next[r];
  }
  EXPECT_EQ(count, 1200);
}

TEST(BraidRunLaunch, AFailingRankStopsTheOthersAndSetsTheExitCode) {
  Outcome o = run({"-n", "3", "sh", "-c", "if [ $RANK = 1 ]; then exit 7; fi; exec sleep 30"});
  EXPECT_EQ(o.exitCode, 7);
  EXPECT_NE(o.err.find("rank 1 exited with code 7"), std::string::npos) << o.err;
  EXPECT_LT(o.seconds, 10);  // the sleepers got SIGTERM, not 30 s of patience
}

TEST(BraidRunLaunch, ARankKilledByASignalIsNamed) {
  Outcome o = run({"-n", "2", "sh", "-c", "if [ $RANK = 0 ]; then kill -KILL $$; fi; exec sleep 30"});
  EXPECT_EQ(o.exitCode, 128 + SIGKILL);
  EXPECT_NE(o.err.find("rank 0 was killed by signal 9 (SIGKILL)"), std::string::npos) << o.err;
}

TEST(BraidRunLaunch, TimeoutKillsEverythingAndExits124) {
  Outcome o = run({"-n", "2", "--timeout", "0.3", "sleep", "30"});
  EXPECT_EQ(o.exitCode, 124);
  EXPECT_NE(o.err.find("timeout"), std::string::npos) << o.err;
  EXPECT_LT(o.seconds, 10);
}

TEST(BraidRunLaunch, RanksIgnoringSigtermAreKilledAfterTheGrace) {
  Outcome o =
      run({"-n", "2", "--timeout", "0.2", "--grace", "0.2", "sh", "-c", "trap '' TERM; while :; do :; done"});
  EXPECT_EQ(o.exitCode, 124);
  EXPECT_LT(o.seconds, 10);
}

TEST(BraidRunLaunch, AMissingProgramIsReported) {
  Outcome o = run({"-n", "2", "/no/such/program"});
  EXPECT_EQ(o.exitCode, 127);
  EXPECT_NE(o.err.find("cannot run '/no/such/program'"), std::string::npos) << o.err;
}

TEST(BraidRunLaunch, QuietRanksKeepsRankZeroStdoutAndEveryStderr) {
  Outcome o = run({"-n", "3", "--quiet-ranks", "sh", "-c", "echo out$RANK; echo err$RANK >&2"});
  ASSERT_EQ(o.exitCode, 0);
  EXPECT_EQ(o.out, "[0] out0\n");
  std::vector<std::string> e = lines(o.err);
  std::sort(e.begin(), e.end());
  EXPECT_EQ(e, (std::vector<std::string>{"[0] err0", "[1] err1", "[2] err2"}));
}

TEST(BraidRunLaunch, NoPrefixPrintsLinesAsTheyAre) {
  Outcome o = run({"-n", "1", "--no-prefix", "printf", "a\\nb"});
  ASSERT_EQ(o.exitCode, 0);
  EXPECT_EQ(o.out, "a\nb\n");  // the unterminated tail becomes a line
}

TEST(BraidRunLaunch, SigtermIsForwardedToTheRanks) {
  BraidRun br({"-n", "2", "sh", "-c", "echo ready; exec sleep 30"});
  br.waitForLines(2);  // both ranks are up
  kill(br.pid(), SIGTERM);
  Outcome o = br.finish();
  EXPECT_EQ(o.exitCode, 128 + SIGTERM);
  EXPECT_LT(o.seconds, 10);
}

}  // namespace

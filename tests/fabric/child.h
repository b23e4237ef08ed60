// A program run by a test: its stdout and stderr captured, every wait bounded.
// The child gets SIGTERM if the test process dies (ctest's timeout, a crash),
// so a `fabric run` under test still tears its fabric down.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace braid::fabric::test {

struct Outcome {
  int exitCode = -1;  // exit code, or 128 + signal
  std::string out, err;
};

class Child {
 public:
  // argv[0] is a path. With dropToUid >= 0 the child runs as that user.
  explicit Child(const std::vector<std::string>& argv, int dropToUid = -1);
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();  // kills and reaps a child still running

  pid_t pid() const { return pid_; }
  const std::string& out() const { return o_.out; }

  // Reads until stdout holds `needle` at least `count` times; false on EOF or
  // after timeoutSec.
  bool waitForOut(const std::string& needle, int count, double timeoutSec);

  // Reads to EOF and reaps. After timeoutSec the child gets SIGKILL and the
  // outcome has exitCode 128 + 9.
  Outcome finish(double timeoutSec);

 private:
  bool pump(int timeoutMs);  // one read round; false when both pipes are at EOF

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  Outcome o_;
  bool reaped_ = false;
};

// Runs argv to completion (finish(timeoutSec)).
Outcome run(const std::vector<std::string>& argv, double timeoutSec = 20);

}  // namespace braid::fabric::test

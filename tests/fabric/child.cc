#include "child.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

namespace braid::fabric::test {

namespace {

using Clock = std::chrono::steady_clock;

int countOf(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

int msLeft(Clock::time_point end) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

}  // namespace

Child::Child(const std::vector<std::string>& argv, int dropToUid) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return;
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(126);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    if (dropToUid >= 0 &&
        (setgid(static_cast<gid_t>(dropToUid)) != 0 || setuid(static_cast<uid_t>(dropToUid)) != 0))
      _exit(126);
    std::vector<char*> cArgv;
    for (const std::string& a : argv) cArgv.push_back(const_cast<char*>(a.c_str()));
    cArgv.push_back(nullptr);
    execv(cArgv[0], cArgv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  fds_[0] = out[0];
  fds_[1] = err[0];
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

bool Child::pump(int timeoutMs) {
  pollfd p[2];
  int n = 0;
  for (int fd : fds_) {
    if (fd >= 0) p[n++] = {fd, POLLIN, 0};
  }
  if (n == 0) return false;
  if (poll(p, static_cast<nfds_t>(n), timeoutMs) <= 0) return true;
  for (int i = 0; i < n; ++i) {
    if (p[i].revents == 0) continue;
    const int which = p[i].fd == fds_[0] ? 0 : 1;
    char buf[4096];
    const ssize_t got = read(p[i].fd, buf, sizeof(buf));
    if (got <= 0) {
      close(fds_[which]);
      fds_[which] = -1;
    } else {
      (which == 0 ? o_.out : o_.err).append(buf, static_cast<size_t>(got));
    }
  }
  return true;
}

bool Child::waitForOut(const std::string& needle, int count, double timeoutSec) {
  const Clock::time_point end = Clock::now() + std::chrono::milliseconds(static_cast<int>(timeoutSec * 1000));
  while (countOf(o_.out, needle) < count) {
    if (Clock::now() >= end || !pump(msLeft(end))) return countOf(o_.out, needle) >= count;
  }
  return true;
}

Outcome Child::finish(double timeoutSec) {
  if (pid_ < 0) return o_;
  const Clock::time_point end = Clock::now() + std::chrono::milliseconds(static_cast<int>(timeoutSec * 1000));
  while (Clock::now() < end && pump(msLeft(end))) {
  }
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }
  reaped_ = true;
  o_.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o_;
}

Outcome run(const std::vector<std::string>& argv, double timeoutSec) {
  Child c(argv);
  return c.finish(timeoutSec);
}

}  // namespace braid::fabric::test

#include "harness.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "harness_internal.h"

namespace braid::itest {
namespace {

using Clock = std::chrono::steady_clock;
using detail::Pipe;
using detail::Plumbing;

Pipe makePipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    perror("pipe2");
    abort();
  }
  return {fds[0], fds[1]};
}

struct Child {
  std::string name;
  pid_t pid = -1;
  int pidfd = -1;
  int reportFd = -1;  // parent's read end; -1 once EOF
  std::string pending;
  std::vector<std::string> messages;
  bool exited = false;
  int status = 0;
  bool killed = false;
  bool expectKill = false;  // RunOptions::mayBeKilled
};

// Splits complete frames out of c.pending.
void parseFrames(Child& c) {
  while (c.pending.size() >= 4) {
    uint32_t n;
    memcpy(&n, c.pending.data(), 4);
    if (c.pending.size() < 4 + n) return;
    c.messages.push_back(c.pending.substr(4, n));
    c.pending.erase(0, 4 + n);
  }
}

bool childFailed(const Child& c) {
  if (c.expectKill && WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL) return !c.messages.empty();
  return c.exited && (!c.messages.empty() || !WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0);
}

// Polls pidfds and report pipes until every child has exited and closed its
// pipe, killing the rest at the deadline or once the grace after a failure ends.
void superviseChildren(std::vector<Child>& children, const RunOptions& o) {
  const auto deadline = Clock::now() + std::chrono::seconds(o.limitSeconds);
  auto killAt = deadline;
  std::string killReason = "the " + std::to_string(o.limitSeconds) + " s limit";
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> who;  // child index, is pidfd
    for (size_t i = 0; i < children.size(); ++i) {
      if (!children[i].exited) {
        fds.push_back({children[i].pidfd, POLLIN, 0});
        who.push_back({i, true});
      }
      if (children[i].reportFd >= 0) {
        fds.push_back({children[i].reportFd, POLLIN, 0});
        who.push_back({i, false});
      }
    }
    if (fds.empty()) return;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(killAt - Clock::now());
    int n = left.count() <= 0 ? 0 : poll(fds.data(), fds.size(), static_cast<int>(left.count()) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 && Clock::now() >= killAt) {
      std::string running;
      for (Child& c : children) {
        if (c.exited) continue;
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &c.status, 0);
        c.exited = c.killed = true;
        running += " " + c.name;
      }
      if (!running.empty()) ADD_FAILURE() << "killed after " << killReason << "; still running:" << running;
      // Drain what the killed children had written before dying.
      for (Child& c : children) {
        if (c.reportFd < 0) continue;
        char buf[4096];
        ssize_t got;
        fcntl(c.reportFd, F_SETFL, O_NONBLOCK);
        while ((got = read(c.reportFd, buf, sizeof buf)) > 0) c.pending.append(buf, got);
        parseFrames(c);
        close(c.reportFd);
        c.reportFd = -1;
      }
      return;
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      Child& c = children[who[k].first];
      if (who[k].second) {
        waitpid(c.pid, &c.status, 0);
        c.exited = true;
        close(c.pidfd);
        if (childFailed(c) && killAt == deadline) {
          killAt = std::min(deadline, Clock::now() + std::chrono::seconds(o.graceSeconds));
          killReason = std::to_string(o.graceSeconds) + " s of grace after " + c.name + " failed";
        }
      } else {
        char buf[4096];
        ssize_t got = read(c.reportFd, buf, sizeof buf);
        if (got > 0) {
          c.pending.append(buf, got);
          parseFrames(c);
        } else if (got == 0 || errno != EINTR) {
          close(c.reportFd);
          c.reportFd = -1;
        }
      }
    }
  }
}

void reportChildren(const std::vector<Child>& children) {
  for (const Child& c : children) {
    for (const std::string& m : c.messages) ADD_FAILURE() << "[" << c.name << "] " << m;
    if (c.killed) continue;
    if (c.expectKill && WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL) continue;
    if (WIFSIGNALED(c.status)) {
      ADD_FAILURE() << c.name << " died with signal " << WTERMSIG(c.status) << " ("
                    << strsignal(WTERMSIG(c.status)) << ")";
    } else if (WIFEXITED(c.status) && WEXITSTATUS(c.status) != 0 && c.messages.empty()) {
      ADD_FAILURE() << c.name << " exited with status " << WEXITSTATUS(c.status);
    }
  }
}

}  // namespace

void runRanks(const RunOptions& o, const RankBody& body) {
  const int started = o.started < 0 ? o.nranks : o.started;
  ASSERT_GE(started, 1);
  ASSERT_LE(started, o.nranks);
  ASSERT_TRUE(o.sidecars == 0 || o.sidecarBody);
  const int nchildren = started + o.sidecars;

  void* shared = nullptr;
  if (o.sharedBytes) {
    shared = mmap(nullptr, o.sharedBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shared, MAP_FAILED);
    if (o.initShared) o.initShared(shared);
  }
  Plumbing p;
  for (int i = 0; i < nchildren; ++i) p.report.push_back(makePipe());
  p.id.resize(started);
  for (int r = 1; r < started; ++r) p.id[r] = makePipe();
  for (int k = 0; k < o.sidecars; ++k) {
    p.toSidecar.push_back(makePipe());
    p.fromSidecar.push_back(makePipe());
  }

  fflush(nullptr);  // or the children would flush the parent's buffered output again
  std::vector<Child> children(nchildren);
  for (int i = 0; i < nchildren; ++i) {
    Child& c = children[i];
    c.name = i < started ? "rank " + std::to_string(i) : "sidecar " + std::to_string(i - started);
    c.pid = fork();
    ASSERT_GE(c.pid, 0) << "fork: " << strerror(errno);
    if (c.pid == 0) {
      std::set<int> keep{p.report[i].w};
      if (i < started) {
        if (i == 0) {
          for (int r = 1; r < started; ++r) keep.insert(p.id[r].w);
          for (int k = 0; k < o.sidecars; ++k) keep.insert({p.toSidecar[k].w, p.fromSidecar[k].r});
        } else {
          keep.insert(p.id[i].r);
        }
        p.closeAllBut(keep);
        detail::rankMain(o, body, p, i, shared);
      }
      int k = i - started;
      keep.insert({p.toSidecar[k].r, p.fromSidecar[k].w});
      p.closeAllBut(keep);
      detail::sidecarMain(o, p, k, i);
    }
    c.expectKill = i < started && std::find(o.mayBeKilled.begin(), o.mayBeKilled.end(), i) != o.mayBeKilled.end();
    c.pidfd = static_cast<int>(syscall(SYS_pidfd_open, c.pid, 0));
    ASSERT_GE(c.pidfd, 0) << "pidfd_open: " << strerror(errno);
  }
  std::set<int> keep;
  for (Child& c : children) keep.insert(c.reportFd = p.report[&c - children.data()].r);
  p.closeAllBut(keep);

  superviseChildren(children, o);
  reportChildren(children);
  if (shared) munmap(shared, o.sharedBytes);
}

std::string ucxMissing() {
#ifndef BRAID_TEST_HAVE_UCX
  return "braid was built without the ucx transport (no UCX headers: Debian's libucx-dev)";
#else
  const pid_t pid = fork();
  if (pid == 0) _exit(dlopen("libucp.so.0", RTLD_NOW | RTLD_LOCAL) != nullptr ? 0 : 1);
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return "UCX is not installed here (no libucp.so.0; Debian: libucx0)";
#endif
}

}  // namespace braid::itest

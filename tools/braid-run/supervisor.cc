#include "supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

#include "exit_status.h"
#include "line_buffer.h"
#include "output.h"
#include "spawn.h"

namespace braid::run {

namespace {

using Clock = std::chrono::steady_clock;

int gSignalPipe[2] = {-1, -1};

void onSignal(int sig) {
  const int saved = errno;
  const unsigned char b = static_cast<unsigned char>(sig);
  (void)!write(gSignalPipe[1], &b, 1);  // non-blocking: a full pipe already wakes us
  errno = saved;
}

struct Rank {
  pid_t pid = -1;
  bool alive = false;
  int status = 0;
  int fds[2] = {-1, -1};  // stdout, stderr
  LineBuffer lines[2];
  std::string prefix;  // "[rank] ", or "" with --no-prefix
};

class Supervisor {
 public:
  Supervisor(const Options& opts, std::vector<Rank>& ranks) : opts_(opts), ranks_(ranks) {}

  void start(const Rendezvous& rv, const std::vector<std::string>& baseEnv);
  void loop();
  int exitCode() const;

 private:
  void relay(int rank, int stream);
  void closeStream(int rank, int stream);
  void reap();
  void onUserSignal(int sig);
  void stopAll(const std::string& why);
  void signalLive(int sig);
  int pollTimeoutMs(Clock::time_point now) const;
  int openFds() const;
  int liveRanks() const;

  const Options& opts_;
  std::vector<Rank>& ranks_;
  bool stopping_ = false;
  int failedRank_ = -1;
  int failureCode_ = 0;
  bool timedOut_ = false;
  int userSignal_ = 0;
  std::optional<Clock::time_point> timeoutAt_, killAt_, drainUntil_;
};

void Supervisor::start(const Rendezvous& rv, const std::vector<std::string>& baseEnv) {
  if (opts_.timeoutSec > 0) {
    timeoutAt_ = Clock::now() +
                 std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opts_.timeoutSec));
  }
  for (int r = 0; r < opts_.nranks && !stopping_; ++r) {
    std::string error;
    cpu_set_t core;
    if (opts_.bindToCore && !coreForRank(r, &core)) {
      failedRank_ = r;
      failureCode_ = kExitCannotRun;
      stopAll("rank " + std::to_string(r) + ": --bind-to core: cannot read this process's CPU affinity");
      return;
    }
    SpawnedRank s = spawnRank(opts_.command, buildRankEnv(baseEnv, r, opts_.nranks, rv), r == 0,
                              opts_.bindToCore ? &core : nullptr, &error);
    if (s.pid < 0) {
      failedRank_ = r;
      failureCode_ = kExitCannotRun;
      stopAll("rank " + std::to_string(r) + ": " + error);
      return;
    }
    if (opts_.prefix) {
      char prefix[32];
      std::snprintf(prefix, sizeof(prefix), "[%d] ", r);
      ranks_[r].prefix = prefix;
    }
    ranks_[r].pid = s.pid;
    ranks_[r].alive = true;
    ranks_[r].fds[0] = s.outFd;
    ranks_[r].fds[1] = s.errFd;
  }
}

int Supervisor::openFds() const {
  int n = 0;
  for (const Rank& r : ranks_) n += (r.fds[0] >= 0) + (r.fds[1] >= 0);
  return n;
}

int Supervisor::liveRanks() const {
  int n = 0;
  for (const Rank& r : ranks_) n += r.alive;
  return n;
}

void Supervisor::relay(int rank, int stream) {
  char buf[65536];
  Rank& r = ranks_[rank];
  ssize_t n = read(r.fds[stream], buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    closeStream(rank, stream);
    return;
  }
  const bool shown = stream == 1 || !opts_.quietRanks || rank == 0;
  const int fd = stream == 0 ? STDOUT_FILENO : STDERR_FILENO;
  r.lines[stream].append({buf, static_cast<size_t>(n)}, [&](std::string_view line) {
    if (shown) writeLine(fd, r.prefix, line);
  });
}

void Supervisor::closeStream(int rank, int stream) {
  Rank& r = ranks_[rank];
  const bool shown = stream == 1 || !opts_.quietRanks || rank == 0;
  const int fd = stream == 0 ? STDOUT_FILENO : STDERR_FILENO;
  r.lines[stream].finish([&](std::string_view line) {
    if (shown) writeLine(fd, r.prefix, line);
  });
  close(r.fds[stream]);
  r.fds[stream] = -1;
}

void Supervisor::reap() {
  // A rank that fails on its own is the cause; ranks that die after we began
  // stopping the job are casualties and are only counted. Ranks found dead in
  // the same pass exited in an order we cannot see: one killed by a signal is
  // taken before one that exited with an error, which is usually a survivor
  // reporting the death (a rank killed mid-collective, its peers failing the
  // collective at once).
  int cause = -1;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Rank& r = ranks_[i];
    if (!r.alive) continue;
    int status = 0;
    pid_t got = waitpid(r.pid, &status, WNOHANG);
    if (got != r.pid) continue;
    r.alive = false;
    r.status = status;
    if (waitStatusOk(status) || stopping_) continue;
    if (cause < 0 || (WIFSIGNALED(status) && !WIFSIGNALED(ranks_[cause].status))) cause = static_cast<int>(i);
  }
  if (cause >= 0) {
    failedRank_ = cause;
    failureCode_ = exitCodeFor(ranks_[cause].status);
    stopAll("rank " + std::to_string(cause) + " " + describeWaitStatus(ranks_[cause].status));
  }
}

void Supervisor::signalLive(int sig) {
  for (const Rank& r : ranks_) {
    if (r.alive) kill(r.pid, sig);
  }
}

void Supervisor::stopAll(const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  const int live = liveRanks();
  note(live > 0 ? why + "; stopping " + std::to_string(live) + " running rank(s)" : why);
  signalLive(SIGTERM);
  killAt_ = Clock::now() +
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opts_.graceSec));
}

void Supervisor::onUserSignal(int sig) {
  if (userSignal_ != 0) {  // asked twice: no more patience
    note("second signal: killing every rank");
    signalLive(SIGKILL);
    return;
  }
  userSignal_ = sig;
  signalLive(sig);
  if (!stopping_) {
    stopping_ = true;
    killAt_ = Clock::now() +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opts_.graceSec));
  }
}

int Supervisor::pollTimeoutMs(Clock::time_point now) const {
  std::optional<Clock::time_point> next;
  for (const auto& t : {timeoutAt_, killAt_, drainUntil_}) {
    if (t && (!next || *t < *next)) next = t;
  }
  if (!next) return -1;
  if (*next <= now) return 0;
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(*next - now).count()) + 1;
}

void Supervisor::loop() {
  std::vector<pollfd> pfds;
  std::vector<std::pair<int, int>> owners;  // (rank, stream) of pfds[1..]
  while (liveRanks() > 0 || openFds() > 0) {
    pfds.assign(1, pollfd{gSignalPipe[0], POLLIN, 0});
    owners.clear();
    for (size_t i = 0; i < ranks_.size(); ++i) {
      for (int s = 0; s < 2; ++s) {
        if (ranks_[i].fds[s] < 0) continue;
        pfds.push_back({ranks_[i].fds[s], POLLIN, 0});
        owners.emplace_back(static_cast<int>(i), s);
      }
    }
    int rc = poll(pfds.data(), pfds.size(), pollTimeoutMs(Clock::now()));
    if (rc < 0 && errno != EINTR) {
      note(std::string("poll failed: ") + std::strerror(errno));
      signalLive(SIGKILL);
      failureCode_ = failureCode_ ? failureCode_ : 1;
    }
    for (size_t k = 1; rc > 0 && k < pfds.size(); ++k) {
      if (pfds[k].revents != 0) relay(owners[k - 1].first, owners[k - 1].second);
    }
    unsigned char sigs[64];
    ssize_t n;
    while ((n = read(gSignalPipe[0], sigs, sizeof(sigs))) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        if (sigs[i] != SIGCHLD) onUserSignal(sigs[i]);
      }
    }
    reap();

    const Clock::time_point now = Clock::now();
    if (timeoutAt_ && now >= *timeoutAt_) {
      timeoutAt_.reset();
      timedOut_ = true;
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%g", opts_.timeoutSec);
      stopAll(std::string("timeout after ") + secs + " s");
    }
    if (killAt_ && now >= *killAt_) {
      killAt_.reset();
      signalLive(SIGKILL);
    }
    // Every rank is gone but a pipe is still open (a grandchild holds it):
    // give it a moment to flush, then stop listening.
    if (liveRanks() == 0 && openFds() > 0) {
      if (!drainUntil_) drainUntil_ = now + std::chrono::seconds(1);
      if (now >= *drainUntil_) {
        for (size_t i = 0; i < ranks_.size(); ++i) {
          for (int s = 0; s < 2; ++s) {
            if (ranks_[i].fds[s] >= 0) closeStream(static_cast<int>(i), s);
          }
        }
      }
    }
  }
}

int Supervisor::exitCode() const {
  if (timedOut_) return kExitTimeout;
  if (failedRank_ >= 0) return failureCode_;
  if (userSignal_ != 0) return 128 + userSignal_;
  return failureCode_;
}

}  // namespace

int supervise(const Options& opts, const Rendezvous& rv, const std::vector<std::string>& baseEnv) {
  if (pipe2(gSignalPipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    note(std::string("pipe: ") + std::strerror(errno));
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill the supervisor

  std::vector<Rank> ranks(static_cast<size_t>(opts.nranks));
  Supervisor sup(opts, ranks);
  sup.start(rv, baseEnv);
  sup.loop();
  return sup.exitCode();
}

}  // namespace braid::run

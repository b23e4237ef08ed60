#include "spawn.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace braid::run {

namespace {

std::vector<char*> cStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void closeAll(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void execChild(char* const* argv, char* const* envp, pid_t parent, int outW, int errW,
                            int statusW, bool inheritStdin, const cpu_set_t* cpus, const sigset_t* oldMask) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);                        // the parent died before prctl
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);  // incl. the ignored SIGPIPE
  sigprocmask(SIG_SETMASK, oldMask, nullptr);
  if (!inheritStdin) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  }
  if ((cpus != nullptr && sched_setaffinity(0, sizeof(cpu_set_t), cpus) != 0) || dup2(outW, STDOUT_FILENO) < 0 ||
      dup2(errW, STDERR_FILENO) < 0) {
    int err = errno;
    (void)!write(statusW, &err, sizeof(err));
    _exit(127);
  }
  execvpe(argv[0], argv, envp);
  int err = errno;
  (void)!write(statusW, &err, sizeof(err));
  _exit(127);
}

}  // namespace

SpawnedRank spawnRank(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      bool inheritStdin, const cpu_set_t* cpus, std::string* error) {
  SpawnedRank out;
  int outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1}, statusPipe[2] = {-1, -1};
  if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0 || pipe2(statusPipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    closeAll({outPipe[0], outPipe[1], errPipe[0], errPipe[1], statusPipe[0], statusPipe[1]});
    return out;
  }
  std::vector<char*> cArgv = cStrings(argv);
  std::vector<char*> cEnv = cStrings(env);
  const pid_t parent = getpid();

  // Block every signal across fork so that no handler of ours runs in the child.
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  const pid_t pid = fork();
  if (pid == 0) {
    execChild(cArgv.data(), cEnv.data(), parent, outPipe[1], errPipe[1], statusPipe[1], inheritStdin, cpus, &old);
  }
  const int forkErrno = errno;
  sigprocmask(SIG_SETMASK, &old, nullptr);
  closeAll({outPipe[1], errPipe[1], statusPipe[1]});
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(forkErrno);
    closeAll({outPipe[0], errPipe[0], statusPipe[0]});
    return out;
  }

  // EOF on the status pipe means exec succeeded (close-on-exec closed it).
  int childErrno = 0;
  ssize_t n;
  do {
    n = read(statusPipe[0], &childErrno, sizeof(childErrno));
  } while (n < 0 && errno == EINTR);
  close(statusPipe[0]);
  if (n > 0) {
    *error = "cannot run '" + argv[0] + "': " + std::strerror(childErrno);
    closeAll({outPipe[0], errPipe[0]});
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return out;
  }
  fcntl(outPipe[0], F_SETFL, O_NONBLOCK);
  fcntl(errPipe[0], F_SETFL, O_NONBLOCK);
  out.pid = pid;
  out.outFd = outPipe[0];
  out.errFd = errPipe[0];
  return out;
}

bool coreForRank(int rank, cpu_set_t* out) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  const int count = CPU_COUNT(&allowed);
  if (count == 0) return false;
  int wanted = rank % count;
  CPU_ZERO(out);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed) && wanted-- == 0) {
      CPU_SET(cpu, out);
      return true;
    }
  }
  return false;
}

}  // namespace braid::run

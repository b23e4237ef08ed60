// Starting one rank: fork + exec with its stdout and stderr on pipes.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace braid::run {

struct SpawnedRank {
  pid_t pid = -1;
  int outFd = -1;  // read end of the rank's stdout, non-blocking, close-on-exec
  int errFd = -1;  // same for stderr
};

// Starts argv[0] (looked up in PATH) with exactly env as its environment.
// stdin is inherited when inheritStdin, else /dev/null. The child gets SIGKILL
// if braid-run dies, so ranks are never orphaned. On failure (including an
// exec failure, reported by the child through a close-on-exec pipe) returns
// pid -1 and fills *error; nothing is left running.
//
// cpus: when not null, the child's CPU affinity, set before exec so that every
// thread the program starts inherits it (a failure is reported like an exec
// failure).
//
// Call with no signal handler able to run in the child: the caller's handlers
// are reset to the default in the child before exec.
SpawnedRank spawnRank(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      bool inheritStdin, const cpu_set_t* cpus, std::string* error);

// --bind-to core: the CPU of rank `rank` among those this process may run on
// (rank modulo their number), as a one-CPU set. False when the affinity
// cannot be read.
bool coreForRank(int rank, cpu_set_t* out);

}  // namespace braid::run

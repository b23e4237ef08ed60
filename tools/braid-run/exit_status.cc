#include "exit_status.h"

#include <sys/wait.h>

#include <csignal>
#include <cstring>

namespace braid::run {

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    std::string s = "was killed by signal " + std::to_string(sig);
    if (abbrev != nullptr) s += std::string(" (SIG") + abbrev + ")";
    if (WCOREDUMP(status)) s += ", core dumped";
    return s;
  }
  return "ended with wait status " + std::to_string(status);
}

bool waitStatusOk(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

int exitCodeFor(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace braid::run

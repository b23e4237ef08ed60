// Turning a wait(2) status into words and into braid-run's own exit code.
#pragma once

#include <string>

namespace braid::run {

// "exited with code 3", "was killed by signal 9 (SIGKILL)".
std::string describeWaitStatus(int status);

// True when the rank succeeded (exit code 0).
bool waitStatusOk(int status);

// The code braid-run exits with when this status is the cause of failure:
// the exit code, or 128 + the signal number, as shells do.
int exitCodeFor(int status);

}  // namespace braid::run

// Runs one braid-run job: starts the ranks, relays their output, watches for
// failures, the timeout and signals, and decides braid-run's exit code.
//
// Single-threaded: one poll(2) loop over every rank's pipes plus a self-pipe
// that the SIGCHLD / SIGINT / SIGTERM / SIGHUP handlers write to.
#pragma once

#include <string>
#include <vector>

#include "options.h"
#include "rank_env.h"

namespace braid::run {

// Exit codes besides a failed rank's own: the timeout (as timeout(1)) and a
// rank that could not be started (as a shell's "command not found").
constexpr int kExitTimeout = 124;
constexpr int kExitCannotRun = 127;

// baseEnv: "NAME=value" entries every rank inherits (usually environ).
int supervise(const Options& opts, const Rendezvous& rv, const std::vector<std::string>& baseEnv);

}  // namespace braid::run

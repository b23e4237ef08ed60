// Command line of braid-run: what to launch and how to supervise it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace braid::run {

struct Options {
  int nranks = 0;
  std::string addr = "127.0.0.1";    // where rank 0 opens the rendezvous root
  double timeoutSec = 0;             // 0: no limit
  double graceSec = 5;               // SIGTERM -> SIGKILL delay when stopping ranks
  bool prefix = true;                // "[rank] " before every line
  bool quietRanks = false;           // stdout of rank 0 only (stderr of all ranks is kept)
  bool bindToCore = false;           // --bind-to core: rank r runs on the r-th CPU braid-run may use (mod)
  std::vector<std::string> command;  // program and its arguments
};

// Parses argv. On --help or a usage error, prints what CLI11 prints and returns
// std::nullopt with *exitCode set (0 for --help).
std::optional<Options> parseOptions(int argc, const char* const* argv, int* exitCode);

}  // namespace braid::run

// Finds and reads the dumps named on the command line: each argument is a
// dump file or a directory whose *.json files are dumps (BRAID_TRACE_DIR).
// Checks that the dumps belong together (one nranks, one dump per rank).
#pragma once

#include <string>
#include <vector>

#include "dump.h"

namespace braid::trace {

struct Loaded {
  std::vector<Dump> dumps;  // sorted by rank
  std::string error;        // "" on success; else names the file and the problem
};

Loaded loadDumps(const std::vector<std::string>& paths);

// The cross-file checks alone, on dumps already parsed: "" or the problem.
std::string checkTogether(const std::vector<Dump>& dumps);

}  // namespace braid::trace

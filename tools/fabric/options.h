// Command line of fabric: which verb, on which fabric, with what settings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology.h"

namespace braid::fabric {

enum class Verb { kUp, kDown, kRun, kMeasure, kStatus, kLink };

struct Options {
  Verb verb = Verb::kStatus;
  FabricSpec spec;  // name always; hosts, rate and burst for up and run
  // run
  int ranksPerHost = 1;
  double timeoutSec = 0;  // 0: no limit
  double graceSec = 5;
  double measureSec = 2;  // raw link measurement before the ranks start; 0 skips it
  bool prefix = true;
  std::vector<std::string> command;
  // measure
  int from = 0, to = 1;
  // link
  int host = 0;
  bool linkUp = true;
};

// Parses argv. On --help or a usage error, prints what CLI11 prints and
// returns std::nullopt with *exitCode set (0 for --help).
std::optional<Options> parseOptions(int argc, const char* const* argv, int* exitCode);

}  // namespace braid::fabric

// Running ip(8) and tc(8): the only way fabric changes the network.
#pragma once

#include <string>
#include <vector>

namespace braid::fabric {

struct ToolResult {
  int exitCode = -1;   // the tool's exit code; -1 if it could not run or was killed
  std::string output;  // stdout and stderr together, trimmed
};

// Runs argv (looked up in PATH) with stdin on /dev/null and waits for it.
// Single-shot and synchronous; the tools it runs finish in milliseconds.
ToolResult runTool(const std::vector<std::string>& argv);

// "ip -n x link add ..." for messages.
std::string joinArgv(const std::vector<std::string>& argv);

}  // namespace braid::fabric

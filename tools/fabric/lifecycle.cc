#include "lifecycle.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "exec.h"

namespace braid::fabric {

std::vector<std::string> listNamespaces() {
  std::vector<std::string> names;
  DIR* dir = opendir("/run/netns");
  if (dir == nullptr) return names;  // no namespace was ever added
  while (dirent* e = readdir(dir)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> fabricNamespaces(const std::string& fabric) {
  std::vector<std::string> out;
  for (const std::string& ns : listNamespaces()) {
    if (ownsNamespace(fabric, ns)) out.push_back(ns);
  }
  return out;
}

namespace {

void killProcessesIn(const std::string& ns) {
  ToolResult pids = runTool({"ip", "netns", "pids", ns});
  std::istringstream in(pids.output);
  long pid = 0;
  while (in >> pid) {
    if (pid > 1 && pid != getpid()) kill(static_cast<pid_t>(pid), SIGKILL);
  }
}

}  // namespace

int removeFabric(const std::string& fabric, std::vector<std::string>* errors) {
  int removed = 0;
  for (const std::string& ns : fabricNamespaces(fabric)) {
    killProcessesIn(ns);
    ToolResult r = runTool({"ip", "netns", "del", ns});
    if (r.exitCode == 0) {
      ++removed;
    } else {
      errors->push_back("ip netns del " + ns + ": " + r.output);
    }
  }
  return removed;
}

bool createFabric(const FabricSpec& spec, const volatile std::sig_atomic_t* stop, std::string* error) {
  for (const std::vector<std::string>& cmd : buildCommands(spec)) {
    std::string why;
    if (*stop != 0) {
      why = "interrupted while setting up";
    } else if (ToolResult r = runTool(cmd); r.exitCode != 0) {
      why = joinArgv(cmd) + ": " + (r.output.empty() ? "failed" : r.output);
    }
    if (!why.empty()) {
      std::vector<std::string> ignored;
      removeFabric(spec.name, &ignored);
      *error = why;
      return false;
    }
  }
  return true;
}

bool fabricComplete(const FabricSpec& spec) {
  const std::vector<std::string> have = fabricNamespaces(spec.name);
  auto has = [&](const std::string& ns) { return std::find(have.begin(), have.end(), ns) != have.end(); };
  if (!has(bridgeNamespace(spec.name))) return false;
  for (int i = 0; i < spec.hosts; ++i) {
    if (!has(hostNamespace(spec.name, i))) return false;
  }
  return true;
}

}  // namespace braid::fabric

#include "topology.h"

#include <algorithm>
#include <cctype>

namespace braid::fabric {

namespace {

// tbf's queue: 50 ms at the configured rate before packets are dropped, deep
// enough that TCP keeps the link busy, short enough to keep latency sane.
constexpr const char* kTbfLatency = "50ms";

std::vector<std::string> tbf(const std::string& ns, const std::string& dev, const FabricSpec& spec) {
  return {"tc",
          "-n",
          ns,
          "qdisc",
          "add",
          "dev",
          dev,
          "root",
          "tbf",
          "rate",
          std::to_string(spec.rateBits).append("bit"),
          "burst",
          std::to_string(spec.burstBytes),
          "latency",
          kTbfLatency};
}

}  // namespace

bool validFabricName(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// Built with append: GCC 12 at -O3 reports a false -Wrestrict for
// `"literal" + std::to_string(n)`.
std::string hostNamespace(const std::string& fabric, int host) {
  return std::string(fabric).append("-host").append(std::to_string(host));
}

std::string bridgeNamespace(const std::string& fabric) { return fabric + "-br"; }

std::string bridgePort(int host) { return std::string("p").append(std::to_string(host)); }

std::string hostAddress(int host) { return std::string("10.77.0.").append(std::to_string(host + 1)); }

bool ownsNamespace(const std::string& fabric, const std::string& ns) {
  if (ns == bridgeNamespace(fabric)) return true;
  const std::string prefix = fabric + "-host";
  if (ns.size() <= prefix.size() || ns.compare(0, prefix.size(), prefix) != 0) return false;
  return std::all_of(ns.begin() + static_cast<long>(prefix.size()), ns.end(),
                     [](unsigned char c) { return std::isdigit(c); });
}

std::vector<std::vector<std::string>> buildCommands(const FabricSpec& spec) {
  std::vector<std::vector<std::string>> cmds;
  const std::string br = bridgeNamespace(spec.name);
  cmds.push_back({"ip", "netns", "add", br});
  for (int i = 0; i < spec.hosts; ++i) cmds.push_back({"ip", "netns", "add", hostNamespace(spec.name, i)});

  cmds.push_back({"ip", "-n", br, "link", "set", "lo", "up"});
  cmds.push_back({"ip", "-n", br, "link", "add", kBridgeIfname, "type", "bridge", "stp_state", "0"});
  cmds.push_back({"ip", "-n", br, "link", "set", kBridgeIfname, "up"});
  for (int i = 0; i < spec.hosts; ++i) {
    const std::string ns = hostNamespace(spec.name, i);
    const std::string port = bridgePort(i);
    // Created inside the bridge namespace, its peer born inside the host's.
    cmds.push_back(
        {"ip", "-n", br, "link", "add", port, "type", "veth", "peer", "name", kHostIfname, "netns", ns});
    cmds.push_back({"ip", "-n", br, "link", "set", port, "master", kBridgeIfname});
    cmds.push_back(tbf(br, port, spec));
    cmds.push_back({"ip", "-n", br, "link", "set", port, "up"});
    cmds.push_back({"ip", "-n", ns, "link", "set", "lo", "up"});
    cmds.push_back({"ip", "-n", ns, "addr", "add", hostAddress(i) + "/24", "dev", kHostIfname});
    cmds.push_back(tbf(ns, kHostIfname, spec));
    cmds.push_back({"ip", "-n", ns, "link", "set", kHostIfname, "up"});
  }
  return cmds;
}

std::vector<std::string> linkCommand(const std::string& fabric, int host, bool up) {
  return {"ip", "-n", bridgeNamespace(fabric), "link", "set", bridgePort(host), up ? "up" : "down"};
}

}  // namespace braid::fabric

#include "render_text.h"

#include <sstream>

#include "topo/print.h"

namespace braid::info {

std::string renderText(const Collected& c) {
  const Json& d = c.doc;
  std::ostringstream out;
  out << "braid " << d["version"]["string"].get<std::string>() << " (version code " << d["version"]["code"].get<int>()
      << ")\n\n";
  out << "build: " << d["build"]["buildType"].get<std::string>();
  if (!d["build"]["sanitizer"].get<std::string>().empty())
    out << ", sanitizer " << d["build"]["sanitizer"].get<std::string>();
  out << "\n";
  for (const auto& [part, state] : d["build"]["parts"].items())
    out << "  " << part << ": " << state.get<std::string>() << "\n";
  out << "\ntopology:\n";
  if (c.haveTopology) out << topo::formatTree(c.topology, "  ");
  else out << "  unavailable: " << d["topology"]["error"].get<std::string>() << "\n";
  const Json& cpus = d["process"]["cpus"];
  out << "  this process may run on cpus " << (cpus.is_string() ? cpus.get<std::string>() : "? (no affinity)")
      << "\n";
  out << "\ntransports:\n";
  for (const Json& t : d["transports"]) {
    out << "  " << t["name"].get<std::string>() << ": " << t["status"].get<std::string>() << "\n";
    if (t.contains("devices"))
      for (const Json& dev : t["devices"]) {
        out << "    " << dev["name"].get<std::string>() << "  " << dev["address"].get<std::string>();
        double mbps = dev["speedMbps"].get<double>();
        if (mbps > 0) out << "  " << mbps << " Mb/s";
        out << "\n";
      }
  }
  out << "\nalgorithms:\n";
  for (const auto& [collective, names] : d["algorithms"].items()) {
    out << "  " << collective << ":";
    for (const Json& n : names) out << " " << n.get<std::string>();
    out << "\n";
  }
  out << "\n(braid-info --env lists the BRAID_* variables; --json prints all of this as JSON)\n";
  return out.str();
}

std::string renderEnv(const Json& env) {
  std::ostringstream out;
  for (const Json& v : env) {
    out << v["name"].get<std::string>() << " = ";
    if (v["value"].is_null()) out << "(unset)";
    else out << "'" << v["value"].get<std::string>() << "'";
    std::string dflt = v["default"].get<std::string>();
    out << "   default: " << (dflt.empty() ? "(none)" : dflt) << "\n";
    out << "    " << v["help"].get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace braid::info

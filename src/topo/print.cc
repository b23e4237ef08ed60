#include "topo/print.h"

#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

namespace braid::topo {
namespace {

std::string hex4(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04x", v);
  return buf;
}

std::string speed(double mbps) {
  if (mbps <= 0) return "speed ?";
  char buf[32];
  std::snprintf(buf, sizeof(buf), mbps >= 1000 ? "%.0f Gb/s" : "%.0f Mb/s", mbps >= 1000 ? mbps / 1000 : mbps);
  return buf;
}

// What hangs on a PCI device: its NICs and GPUs, for the tree.
std::string devicesOn(const HostTopology& h, const std::string& pci) {
  std::string s;
  for (const Nic& n : h.nics)
    if (n.pci == pci) s += " " + n.name;
  for (const Gpu& g : h.gpus)
    if (g.pci == pci) s += " " + g.name;
  return s;
}

void pciTree(std::ostringstream& out, const HostTopology& h, const std::string& parent, const std::string& indent,
             int depth) {
  if (depth > 32) return;
  for (const PciEntry& e : h.pci) {
    if (e.parent != parent || (parent.empty() && e.kind != PciKind::kHostBridge)) continue;
    out << indent << e.id;
    if (e.kind == PciKind::kHostBridge) out << " host bridge";
    else out << " [" << hex4(e.classId) << " " << hex4(e.vendor) << ":" << hex4(e.device) << "]"
             << (e.kind == PciKind::kBridge ? " bridge" : "");
    if (e.numa >= 0) out << " numa " << e.numa;
    out << devicesOn(h, e.id) << "\n";
    pciTree(out, h, e.id, indent + "  ", depth + 1);
  }
}

}  // namespace

std::string formatBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof(buf), v == static_cast<uint64_t>(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string formatTree(const HostTopology& h, const std::string& in) {
  std::ostringstream out;
  out << in << "host " << (h.hostname.empty() ? "?" : h.hostname) << "  (id " << h.hostId << ", from " << h.source
      << ")\n";
  out << in << "  " << h.packages.size() << " package(s), " << h.numaNodes.size() << " NUMA node(s), "
      << h.cores.size() << " core(s), " << h.puCount() << " PU(s)\n";
  for (const Package& p : h.packages) {
    out << in << "  package " << p.id << ": cpus " << p.cpus.toString() << "\n";
    for (const NumaNode& n : h.numaNodes) {
      if (n.package != p.id && !(n.package < 0 && &p == &h.packages[0])) continue;
      int cores = 0;
      for (const Core& c : h.cores) cores += c.numa == n.id;
      out << in << "    numa " << n.id << ": cpus " << n.cpus.toString() << ", " << cores << " cores";
      if (n.memoryBytes) out << ", " << formatBytes(n.memoryBytes);
      out << "\n";
    }
  }
  std::map<std::tuple<int, std::string, uint64_t>, int> caches;
  for (const Cache& c : h.caches) ++caches[{c.level, c.type, c.sizeBytes}];
  if (!caches.empty()) {
    out << in << "  caches:";
    for (const auto& [key, count] : caches) {
      const auto& [level, type, size] = key;
      out << " L" << level << (type == "data" ? "d" : type == "instruction" ? "i" : "") << " " << formatBytes(size)
          << " x" << count << ";";
    }
    // Say so when the size braid plans with is not the one reported.
    if (h.reportedLastLevelCacheBytes() != h.lastLevelCacheBytes())
      out << " taken as " << formatBytes(h.lastLevelCacheBytes()) << " (more than "
          << formatBytes(HostTopology::kMaxCacheBytesPerPu) << " per PU sharing it is not believed);";
    out << "\n";
  }
  if (!h.numaDistances.empty() && h.numaNodes.size() > 1) {
    out << in << "  numa distances:";
    for (const auto& row : h.numaDistances) {
      out << " [";
      for (size_t i = 0; i < row.size(); ++i) out << (i ? " " : "") << row[i];
      out << "]";
    }
    out << "\n";
  }
  out << in << "  pci:" << (h.pci.empty() ? " none found\n" : "\n");
  pciTree(out, h, "", in + "    ", 0);
  out << in << "  nics:" << (h.nics.empty() ? " none\n" : "\n");
  for (const Nic& n : h.nics) {
    out << in << "    " << n.name << "  " << (n.kind == NicKind::kRdma ? "rdma" : "netdev") << "  "
        << (n.pci.empty() ? "virtual" : "pci " + n.pci) << "  numa " << (n.numa >= 0 ? std::to_string(n.numa) : "?")
        << "  " << speed(n.speedMbps) << "  " << (n.up ? "up" : "down");
    if (!n.netdev.empty()) out << "  netdev " << n.netdev;
    out << "\n";
  }
  out << in << "  gpus:" << (h.gpus.empty() ? " none\n" : "\n");
  for (size_t i = 0; i < h.gpus.size(); ++i) {
    const Gpu& g = h.gpus[i];
    int nic = h.closestNicToGpu(static_cast<int>(i));
    out << in << "    " << g.name << "  pci " << (g.pci.empty() ? "-" : g.pci) << "  numa "
        << (g.numa >= 0 ? std::to_string(g.numa) : "?");
    if (nic >= 0)
      out << "  closest NIC " << h.nics[nic].name << " (" << pathTypeName(h.pciPath(g.pci, h.nics[nic].pci)) << ")";
    out << "\n";
  }
  out << in << "  closest NIC per NUMA node:";
  for (const NumaNode& n : h.numaNodes) {
    int nic = h.closestNicToNuma(n.id);
    out << " " << n.id << " -> " << (nic >= 0 ? h.nics[nic].name : "none") << ";";
  }
  out << "\n";
  return out.str();
}

}  // namespace braid::topo

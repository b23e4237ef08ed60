// The detector without hwloc: /sys/devices/system/{cpu,node} for cores,
// packages, NUMA nodes and caches, /sys/bus/pci for the PCI tree. Whatever is
// missing (a container without /sys/devices/system/node, a VM without PCI)
// is filled with the least that is certainly true: one NUMA node holding every
// online CPU, one package, one core per CPU.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "topo/detect.h"
#include "topo/sysfs_read.h"

namespace braid::topo {
namespace {

CpuList readList(const std::string& path) {
  CpuList list;
  if (!CpuList::parse(sysfs::readLine(path), &list).isOk()) return CpuList();
  return list;
}

void readCpus(const std::string& root, HostTopology* h) {
  std::string base = root + "/sys/devices/system/cpu/";
  CpuList online = readList(base + "online");
  if (online.empty()) online = CpuList({0});  // we run on at least one
  std::map<int, std::vector<int>> packages;
  std::map<std::pair<int, int>, std::vector<int>> cores;  // (package, core id) -> PUs
  std::set<std::tuple<int, std::string, std::string>> seenCaches;
  for (int cpu : online.cpus()) {
    std::string dir = base + "cpu" + std::to_string(cpu) + "/";
    int pkg = static_cast<int>(sysfs::readInt(dir + "topology/physical_package_id", 0));
    int core = static_cast<int>(sysfs::readInt(dir + "topology/core_id", cpu));
    if (pkg < 0) pkg = 0;
    if (core < 0) core = cpu;
    packages[pkg].push_back(cpu);
    cores[{pkg, core}].push_back(cpu);
    for (const std::string& index : sysfs::listDir(dir + "cache")) {
      std::string c = dir + "cache/" + index + "/";
      std::string type = sysfs::readLine(c + "type"), shared = sysfs::readLine(c + "shared_cpu_list");
      int level = static_cast<int>(sysfs::readInt(c + "level", 0));
      if (index.rfind("index", 0) != 0 || level < 1 || level > 4) continue;
      type = type == "Data" ? "data" : type == "Instruction" ? "instruction" : "unified";
      if (!seenCaches.insert({level, type, shared}).second) continue;
      std::string size = sysfs::readLine(c + "size");  // "32K", "1024K", "32M"
      uint64_t bytes = std::strtoull(size.c_str(), nullptr, 10);
      if (!size.empty() && size.back() == 'K') bytes <<= 10;
      if (!size.empty() && size.back() == 'M') bytes <<= 20;
      Cache cache{level, type, bytes, CpuList()};
      (void)CpuList::parse(shared, &cache.cpus);
      h->caches.push_back(cache);
    }
  }
  for (auto& [id, cpus] : packages) h->packages.push_back({id, CpuList(cpus)});
  for (auto& [key, pus] : cores) h->cores.push_back({key.second, key.first, -1, CpuList(pus)});
}

void readNuma(const std::string& root, HostTopology* h) {
  std::string base = root + "/sys/devices/system/node/";
  CpuList online = readList(base + "online");  // (a named list: ranging over a temporary's member dangles)
  for (int id : online.cpus()) {
    std::string dir = base + "node" + std::to_string(id) + "/";
    NumaNode node{id, -1, readList(dir + "cpulist"), 0};
    // "Node 0 MemTotal:       16318412 kB"
    std::string mem = sysfs::readLine(dir + "meminfo");
    if (size_t at = mem.find("MemTotal:"); at != std::string::npos)
      node.memoryBytes = std::strtoull(mem.c_str() + at + 9, nullptr, 10) * 1024;
    h->numaNodes.push_back(node);
  }
  if (h->numaNodes.empty()) {  // no NUMA support in this kernel: one node with everything
    CpuList all;
    for (const Package& p : h->packages) all = all.unite(p.cpus);
    h->numaNodes.push_back({0, -1, all, 0});
    return;
  }
  for (const NumaNode& node : h->numaNodes) {
    std::vector<int> row;
    std::string line = sysfs::readLine(base + "node" + std::to_string(node.id) + "/distance");
    for (const char* p = line.c_str(); *p;) {
      char* end = nullptr;
      long d = std::strtol(p, &end, 10);
      if (end == p) break;
      row.push_back(d >= 1 && d <= 255 ? static_cast<int>(d) : 255);
      p = end;
    }
    h->numaDistances.push_back(row);
  }
  for (const auto& row : h->numaDistances)
    if (row.size() != h->numaNodes.size()) h->numaDistances.clear();
}

// /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0: a host bridge, then the
// chain of bridges down to the device.
void readPci(const std::string& root, HostTopology* h) {
  std::set<std::string> known;
  std::string devices = root + "/sys/bus/pci/devices/";
  std::vector<std::vector<std::string>> chains;
  for (const std::string& name : sysfs::listDir(devices)) {
    std::string path = sysfs::realPath(devices + name);
    std::vector<std::string> chain;
    for (size_t pos = path.find("/pci"); pos != std::string::npos && pos < path.size();) {
      size_t next = path.find('/', pos + 1);
      chain.push_back(path.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1));
      pos = next;
    }
    if (chain.size() >= 2 && chain[0].rfind("pci", 0) == 0 && chain.back() == name) chains.push_back(chain);
  }
  // Parents first: shorter chains before longer ones.
  std::stable_sort(chains.begin(), chains.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  for (const auto& chain : chains) {
    for (size_t i = 0; i < chain.size(); ++i) {
      if (known.count(chain[i])) continue;
      if (i > 0 && !sysfs::isPciAddress(chain[i])) break;  // not a plain PCI path
      known.insert(chain[i]);
      PciEntry e;
      e.id = chain[i];
      e.kind = i == 0 ? PciKind::kHostBridge : i + 1 < chain.size() ? PciKind::kBridge : PciKind::kDevice;
      if (i > 0) {
        e.parent = chain[i - 1];
        std::string dir = devices + chain[i] + "/";
        e.classId = static_cast<uint32_t>(sysfs::readInt(dir + "class", 0) >> 8);
        e.vendor = static_cast<uint32_t>(sysfs::readInt(dir + "vendor", 0));
        e.device = static_cast<uint32_t>(sysfs::readInt(dir + "device", 0));
        if (e.kind == PciKind::kDevice && e.classId == 0x0604) e.kind = PciKind::kBridge;
        long long numa = sysfs::readInt(dir + "numa_node", -1);
        e.numa = numa >= 0 && h->findNuma(static_cast<int>(numa)) ? static_cast<int>(numa) : -1;
      }
      h->pci.push_back(e);
    }
  }
  int gpuIndex = 0;
  for (const PciEntry& e : h->pci)
    if (e.kind == PciKind::kDevice && detail::isGpu(e.classId, e.vendor))
      h->gpus.push_back({"gpu" + std::to_string(gpuIndex++), e.id, e.numa});
}

}  // namespace

Status detectSysfs(HostTopology* out, const std::string& sysRoot) {
  HostTopology h;
  h.source = "sysfs";
  readCpus(sysRoot, &h);
  readNuma(sysRoot, &h);
  for (NumaNode& node : h.numaNodes)
    for (const Package& p : h.packages)
      if (!node.cpus.empty() && p.cpus.containsAll(node.cpus)) node.package = p.id;
  for (Core& c : h.cores) c.numa = h.numaOfCpus(c.pus);
  readPci(sysRoot, &h);
  detail::completeDevices(&h, sysRoot);
  detail::fillIdentity(&h);
  *out = std::move(h);
  return Status::ok();
}

}  // namespace braid::topo

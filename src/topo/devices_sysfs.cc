// What both detectors take from sysfs: netdevs and RDMA devices (hwloc lists
// only PCI-attached ones and knows neither link speed nor state), and the
// host's identity.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "core/bootstrap/host_id.h"
#include "topo/detect.h"
#include "topo/sysfs_read.h"

namespace braid::topo::detail {
namespace {

constexpr unsigned kIffUp = 0x1;  // IFF_UP, as /sys/class/net/<if>/flags shows it

// The PCI bus id a /sys/class/... entry's `device` link leads to, if that
// device is in the PCI tree we know ("" otherwise, e.g. virtio or lo).
std::string pciOf(const HostTopology& h, const std::string& classEntry) {
  std::string path = sysfs::realPath(classEntry + "/device");
  std::string name = path.substr(path.find_last_of('/') + 1);
  // A virtio netdev's device is virtioN whose parent is the PCI function.
  if (!sysfs::isPciAddress(name) && !path.empty()) {
    std::string parent = path.substr(0, path.find_last_of('/'));
    name = parent.substr(parent.find_last_of('/') + 1);
  }
  const PciEntry* e = h.findPci(name);
  return e && e->kind == PciKind::kDevice ? name : "";
}

Nic* findNic(HostTopology* h, const std::string& name, NicKind kind) {
  for (Nic& n : h->nics)
    if (n.name == name && n.kind == kind) return &n;
  return nullptr;
}

void addNetdevs(HostTopology* h, const std::string& root) {
  std::string base = root + "/sys/class/net/";
  for (const std::string& name : sysfs::listDir(base)) {
    std::string dir = base + name;
    Nic* nic = findNic(h, name, NicKind::kNetdev);
    if (!nic) {
      h->nics.push_back({name, NicKind::kNetdev, pciOf(*h, dir), -1, 0, "", true});
      nic = &h->nics.back();
    }
    long long speed = sysfs::readInt(dir + "/speed", -1);  // Mb/s; -1 or unreadable when unknown
    if (speed > 0) nic->speedMbps = static_cast<double>(speed);
    nic->up = (static_cast<unsigned long long>(sysfs::readInt(dir + "/flags", 1)) & kIffUp) != 0;
    long long numa = sysfs::readInt(dir + "/device/numa_node", -1);
    if (nic->numa < 0 && numa >= 0 && h->findNuma(static_cast<int>(numa))) nic->numa = static_cast<int>(numa);
  }
}

void addRdmaDevices(HostTopology* h, const std::string& root) {
  std::string base = root + "/sys/class/infiniband/";
  for (const std::string& name : sysfs::listDir(base)) {
    std::string dir = base + name;
    Nic* nic = findNic(h, name, NicKind::kRdma);
    if (!nic) {
      h->nics.push_back({name, NicKind::kRdma, pciOf(*h, dir), -1, 0, "", true});
      nic = &h->nics.back();
    }
    std::vector<std::string> netdevs = sysfs::listDir(dir + "/device/net");
    if (nic->netdev.empty() && !netdevs.empty()) nic->netdev = netdevs[0];
    // Port 1: "100 Gb/sec (4X EDR)" and "4: ACTIVE".
    std::string rate = sysfs::readLine(dir + "/ports/1/rate");
    double gbps = std::strtod(rate.c_str(), nullptr);
    if (gbps > 0) nic->speedMbps = gbps * 1000;
    std::string state = sysfs::readLine(dir + "/ports/1/state");
    if (!state.empty()) nic->up = state.find("ACTIVE") != std::string::npos;
    long long numa = sysfs::readInt(dir + "/device/numa_node", -1);
    if (nic->numa < 0 && numa >= 0 && h->findNuma(static_cast<int>(numa))) nic->numa = static_cast<int>(numa);
  }
}

}  // namespace

void completeDevices(HostTopology* h, const std::string& sysRoot) {
  addNetdevs(h, sysRoot);
  addRdmaDevices(h, sysRoot);
  for (Nic& n : h->nics)
    if (n.numa < 0) n.numa = h->pciNuma(n.pci);
  for (Gpu& g : h->gpus)
    if (g.numa < 0) g.numa = h->pciNuma(g.pci);
  // With one NUMA node every device is on it.
  if (h->numaNodes.size() == 1) {
    for (Nic& n : h->nics)
      if (!n.pci.empty()) n.numa = h->numaNodes[0].id;
    for (Gpu& g : h->gpus) g.numa = h->numaNodes[0].id;
  }
}

void fillIdentity(HostTopology* h) {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  h->hostname = host;
  h->hostId = bootstrap::localHostId();
}

bool isGpu(uint32_t classId, uint32_t vendor) {
  constexpr uint32_t kNvidia = 0x10de, kAmd = 0x1002;
  return classId == 0x0302 || (classId == 0x0300 && (vendor == kNvidia || vendor == kAmd));
}

}  // namespace braid::topo::detail

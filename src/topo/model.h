// The topology of one host: packages, NUMA nodes, cores, caches, the PCI tree,
// NICs (netdevs and RDMA devices) and GPUs, and how far they are from each
// other. Plain data filled by detection (hwloc, or /proc + /sys without it) or
// loaded from a topology file (topo/topo_json.h, format in FORMAT.md), so a
// test can describe a machine it does not run on.
//
// Identifiers are the OS's: a NUMA node's `id` is its OS index (node3), a
// core's `id` its OS core number, cpus are logical CPU numbers (PUs). PCI
// entries are keyed by bus id ("0000:17:00.0"); a host bridge (PCI root
// complex) by "pci<domain>:<bus>" as /sys names it ("pci0000:16").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topo/cpulist.h"

namespace braid::topo {

struct Package {
  int id = 0;
  CpuList cpus;
};

struct NumaNode {
  int id = 0;
  int package = -1;  // -1: unknown or spans packages
  CpuList cpus;
  uint64_t memoryBytes = 0;  // 0: unknown
};

struct Core {
  int id = 0;
  int package = -1;
  int numa = -1;
  CpuList pus;  // its hardware threads
};

struct Cache {
  int level = 0;             // 1, 2, 3, ...
  std::string type;          // "data", "instruction" or "unified"
  uint64_t sizeBytes = 0;
  CpuList cpus;              // the PUs sharing this cache instance
};

enum class PciKind { kHostBridge, kBridge, kDevice };

struct PciEntry {
  std::string id;      // bus id, or "pciDDDD:BB" for a host bridge
  std::string parent;  // "" for a host bridge; else the id of the bridge above
  PciKind kind = PciKind::kDevice;
  uint32_t classId = 0;   // e.g. 0x0200 Ethernet, 0x0207 InfiniBand, 0x0302 3D controller
  uint32_t vendor = 0, device = 0;
  int numa = -1;          // -1: unknown (inherit from the parent when asked)
  double linkGBps = 0;    // PCIe link bandwidth as the OS tells, 0: unknown
};

enum class NicKind { kNetdev, kRdma };

struct Nic {
  std::string name;    // "eth0", "mlx5_0"
  NicKind kind = NicKind::kNetdev;
  std::string pci;     // PCI bus id, "" for virtual devices (lo, bridges, tunnels)
  int numa = -1;       // -1: unknown
  double speedMbps = 0;  // 0: unknown
  std::string netdev;  // rdma: the netdev of the same port when known
  bool up = true;      // netdev: operstate up (loopback counts as up)
};

struct Gpu {
  std::string name;  // detection: "gpu<i>" in PCI order (files may use any name, e.g. "cuda0")
  std::string pci;   // "" when not on PCI
  int numa = -1;
};

// How far apart two PCI devices are, nearest first (the same ladder as NCCL's
// PIX/PXB/PHB/NODE/SYS, so people who read `nvidia-smi topo -m` feel at home).
enum class PathType {
  kSame = 0,   // the same device
  kPix = 1,    // through at most one PCIe bridge (one switch)
  kPxb = 2,    // through several bridges, not the host bridge
  kPhb = 3,    // through a host bridge (the CPU's root complex)
  kNode = 4,   // across host bridges within one NUMA node
  kSys = 5,    // across NUMA nodes (the socket interconnect) or unknown
};
const char* pathTypeName(PathType p);  // "SAME", "PIX", ...

struct HostTopology {
  // Selects this host in a file describing several. Detection fills
  // bootstrap::localHostId(); ranks are grouped by their own localHostId(), not
  // by this field, so one file may describe many identical machines.
  std::string hostId;
  std::string hostname;
  std::string source;  // "hwloc", "sysfs" or "file:<path>": where this came from
  std::vector<Package> packages;
  std::vector<NumaNode> numaNodes;
  // numaDistances[i][j]: relative latency from numaNodes[i] to numaNodes[j]
  // (10 = local, as ACPI SLIT); empty when unknown.
  std::vector<std::vector<int>> numaDistances;
  std::vector<Core> cores;
  std::vector<Cache> caches;
  std::vector<PciEntry> pci;  // parents before children
  std::vector<Nic> nics;
  std::vector<Gpu> gpus;

  int puCount() const;
  // The largest last-level cache instance, as far as it is believable: at
  // most kMaxCacheBytesPerPu for each PU sharing it. VMs may present the
  // whole socket's L3 as each vCPU's own (the 2-core Firecracker VM on an
  // EPYC Turin host: 508 MiB per vCPU, where a core's complex has 32 MiB and
  // memcpy's bandwidth falls past 16 MiB moved); no shipping part gives a
  // PU more than 12 MiB (AMD's 3D V-Cache: 96 MiB per 8-core complex), so
  // the cap cuts no real machine's cache. 0 when no cache is known.
  uint64_t lastLevelCacheBytes() const;
  uint64_t reportedLastLevelCacheBytes() const;  // the same, believed whatever its size
  static constexpr uint64_t kMaxCacheBytesPerPu = uint64_t{32} << 20;
  const PciEntry* findPci(const std::string& id) const;
  const NumaNode* findNuma(int id) const;
  // The NUMA node of a PCI device: its own, else the nearest ancestor's; -1.
  int pciNuma(const std::string& id) const;
  // NUMA distance between node ids (10 same node, 20 when unknown and different).
  int numaDistance(int a, int b) const;
  // The NUMA node whose cpus hold all of `cpus`; -1 when none or several.
  int numaOfCpus(const CpuList& cpus) const;

  // Distance between two PCI devices (kSys when either is unknown).
  PathType pciPath(const std::string& a, const std::string& b) const;
  // Index into nics of the NIC nearest to gpus[gpu]: the shortest path, then
  // RDMA before a netdev, then the faster, then the first. -1 when none.
  int closestNicToGpu(int gpu) const;
  // Index into nics of the NIC nearest to NUMA node `numa` (by id): NICs on
  // that node first, then by NUMA distance; RDMA, then speed break ties.
  // Virtual netdevs (no PCI) count only when there is nothing else. -1: none.
  int closestNicToNuma(int numa) const;
  // Ids of the NUMA node(s) nearest a NIC (its own when known; else all).
  std::vector<int> numaNearNic(int nic) const;
};

}  // namespace braid::topo

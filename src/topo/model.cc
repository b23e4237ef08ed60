#include "topo/model.h"

#include <algorithm>
#include <tuple>

namespace braid::topo {

const char* pathTypeName(PathType p) {
  switch (p) {
    case PathType::kSame: return "SAME";
    case PathType::kPix: return "PIX";
    case PathType::kPxb: return "PXB";
    case PathType::kPhb: return "PHB";
    case PathType::kNode: return "NODE";
    case PathType::kSys: return "SYS";
  }
  return "?";
}

int HostTopology::puCount() const {
  CpuList all;
  for (const NumaNode& n : numaNodes) all = all.unite(n.cpus);
  for (const Core& c : cores) all = all.unite(c.pus);
  return static_cast<int>(all.size());
}

namespace {

// The largest data or unified cache of the deepest level, at most capPerPu
// for each PU sharing it (one when they are unknown).
uint64_t largestLastLevel(const std::vector<Cache>& caches, uint64_t capPerPu) {
  int level = 0;
  for (const Cache& c : caches)
    if (c.type != "instruction") level = std::max(level, c.level);
  uint64_t bytes = 0;
  for (const Cache& c : caches) {
    if (c.level != level || c.type == "instruction") continue;
    const uint64_t sharers = std::max<uint64_t>(1, c.cpus.size());
    const uint64_t cap = capPerPu > UINT64_MAX / sharers ? UINT64_MAX : capPerPu * sharers;
    bytes = std::max(bytes, std::min(c.sizeBytes, cap));
  }
  return bytes;
}

}  // namespace

uint64_t HostTopology::lastLevelCacheBytes() const { return largestLastLevel(caches, kMaxCacheBytesPerPu); }

uint64_t HostTopology::reportedLastLevelCacheBytes() const { return largestLastLevel(caches, UINT64_MAX); }

const PciEntry* HostTopology::findPci(const std::string& id) const {
  if (id.empty()) return nullptr;
  for (const PciEntry& e : pci)
    if (e.id == id) return &e;
  return nullptr;
}

const NumaNode* HostTopology::findNuma(int id) const {
  for (const NumaNode& n : numaNodes)
    if (n.id == id) return &n;
  return nullptr;
}

namespace {
// The entry itself, then its ancestors up to the host bridge. Bounded by the
// number of entries, so a cycle (refused by the file loader anyway) cannot loop.
std::vector<const PciEntry*> chain(const HostTopology& t, const std::string& id) {
  std::vector<const PciEntry*> out;
  for (const PciEntry* e = t.findPci(id); e && out.size() <= t.pci.size(); e = t.findPci(e->parent))
    out.push_back(e);
  return out;
}
}  // namespace

int HostTopology::pciNuma(const std::string& id) const {
  for (const PciEntry* e : chain(*this, id))
    if (e->numa >= 0) return e->numa;
  return -1;
}

int HostTopology::numaDistance(int a, int b) const {
  if (a == b) return 10;
  int ia = -1, ib = -1;
  for (size_t i = 0; i < numaNodes.size(); ++i) {
    if (numaNodes[i].id == a) ia = static_cast<int>(i);
    if (numaNodes[i].id == b) ib = static_cast<int>(i);
  }
  if (ia < 0 || ib < 0 || numaDistances.size() != numaNodes.size()) return 20;
  return numaDistances[ia][ib];
}

int HostTopology::numaOfCpus(const CpuList& cpus) const {
  if (cpus.empty()) return -1;
  for (const NumaNode& n : numaNodes)
    if (n.cpus.containsAll(cpus)) return n.id;
  return -1;
}

PathType HostTopology::pciPath(const std::string& a, const std::string& b) const {
  std::vector<const PciEntry*> ca = chain(*this, a), cb = chain(*this, b);
  if (ca.empty() || cb.empty()) return PathType::kSys;
  if (ca[0] == cb[0]) return PathType::kSame;
  for (size_t i = 0; i < ca.size(); ++i) {
    auto it = std::find(cb.begin(), cb.end(), ca[i]);
    if (it == cb.end()) continue;
    size_t j = static_cast<size_t>(it - cb.begin());
    if (ca[i]->kind == PciKind::kHostBridge) return PathType::kPhb;
    // One switch is an upstream port with downstream ports below it: each side
    // reaches the common bridge through at most one more bridge.
    return i <= 2 && j <= 2 ? PathType::kPix : PathType::kPxb;
  }
  int na = pciNuma(a), nb = pciNuma(b);
  return na >= 0 && na == nb ? PathType::kNode : PathType::kSys;
}

int HostTopology::closestNicToGpu(int gpu) const {
  if (gpu < 0 || gpu >= static_cast<int>(gpus.size())) return -1;
  const Gpu& g = gpus[gpu];
  if (g.pci.empty()) return closestNicToNuma(g.numa);
  int best = -1;
  std::tuple<int, int, double, int> bestKey;
  for (size_t i = 0; i < nics.size(); ++i) {
    const Nic& n = nics[i];
    if (n.pci.empty() || !n.up) continue;
    auto key = std::make_tuple(static_cast<int>(pciPath(g.pci, n.pci)), n.kind == NicKind::kRdma ? 0 : 1,
                               -n.speedMbps, static_cast<int>(i));
    if (best < 0 || key < bestKey) best = static_cast<int>(i), bestKey = key;
  }
  return best >= 0 ? best : closestNicToNuma(g.numa);
}

int HostTopology::closestNicToNuma(int numa) const {
  int best = -1;
  std::tuple<bool, bool, int, int, double, int> bestKey;
  for (size_t i = 0; i < nics.size(); ++i) {
    const Nic& n = nics[i];
    int nicNuma = n.numa >= 0 ? n.numa : pciNuma(n.pci);
    int distance = nicNuma < 0 || numa < 0 ? 1000 : numaDistance(numa, nicNuma);
    auto key = std::make_tuple(n.pci.empty(), !n.up, distance, n.kind == NicKind::kRdma ? 0 : 1,
                               -n.speedMbps, static_cast<int>(i));
    if (best < 0 || key < bestKey) best = static_cast<int>(i), bestKey = key;
  }
  return best;
}

std::vector<int> HostTopology::numaNearNic(int nic) const {
  std::vector<int> out;
  if (nic >= 0 && nic < static_cast<int>(nics.size())) {
    int n = nics[nic].numa >= 0 ? nics[nic].numa : pciNuma(nics[nic].pci);
    if (n >= 0 && findNuma(n)) return {n};
  }
  for (const NumaNode& node : numaNodes) out.push_back(node.id);
  return out;
}

}  // namespace braid::topo

// Reading and validating a topology file (FORMAT.md). Each entry is read by
// one function; cross references (numa ids, package ids, PCI parents) are
// checked after the lists they point into are read.
#include <set>

#include "topo/json_check.h"
#include "topo/topo_file.h"

namespace braid::topo {
namespace {

using detail::JsonError;
using detail::ObjectReader;
using nlohmann::json;

std::string item(const std::string& where, const char* key, size_t i) {
  return where + "." + key + "[" + std::to_string(i) + "]";
}

// -1, or an id present in `ids`.
int reference(ObjectReader& r, const char* key, const std::set<int>& ids, const char* what) {
  int v = static_cast<int>(r.integer(key, false, -1, kMaxCpu, -1));
  if (v >= 0 && !ids.count(v)) r.fail(key, std::string("no ") + what + " with id " + std::to_string(v));
  return v;
}

void readCpuParts(const json& j, const std::string& where, HostTopology* h, std::set<int>* pkgIds,
                  std::set<int>* numaIds) {
  ObjectReader r(j, where);
  const json& packages = r.array("packages", true);
  for (size_t i = 0; i < packages.size(); ++i) {
    ObjectReader p(packages[i], item(where, "packages", i));
    Package pkg{static_cast<int>(p.integer("id", true, 0, kMaxCpu)), p.cpus("cpus", false)};
    if (!pkgIds->insert(pkg.id).second) p.fail("id", "duplicate package id " + std::to_string(pkg.id));
    p.finish();
    h->packages.push_back(pkg);
  }
  const json& nodes = r.array("numaNodes", true);
  for (size_t i = 0; i < nodes.size(); ++i) {
    ObjectReader n(nodes[i], item(where, "numaNodes", i));
    NumaNode node;
    node.id = static_cast<int>(n.integer("id", true, 0, kMaxCpu));
    node.package = reference(n, "package", *pkgIds, "package");
    node.cpus = n.cpus("cpus", false);
    node.memoryBytes = static_cast<uint64_t>(n.integer("memoryBytes", false, 0, INT64_MAX));
    if (!numaIds->insert(node.id).second) n.fail("id", "duplicate NUMA node id " + std::to_string(node.id));
    n.finish();
    h->numaNodes.push_back(node);
  }
  const json& cores = r.array("cores", true);
  for (size_t i = 0; i < cores.size(); ++i) {
    ObjectReader c(cores[i], item(where, "cores", i));
    Core core;
    core.id = static_cast<int>(c.integer("id", true, 0, kMaxCpu));
    core.package = reference(c, "package", *pkgIds, "package");
    core.numa = reference(c, "numa", *numaIds, "NUMA node");
    core.pus = c.cpus("pus", true);
    if (core.pus.empty()) c.fail("pus", "a core has at least one PU");
    c.finish();
    h->cores.push_back(core);
  }
  if (h->packages.empty() || h->numaNodes.empty() || h->cores.empty())
    throw JsonError(where + ": needs at least one package, one NUMA node and one core");
  const json& dist = r.array("numaDistances", false);
  if (!dist.empty() && dist.size() != h->numaNodes.size())
    r.fail("numaDistances", "expected " + std::to_string(h->numaNodes.size()) + " rows (one per NUMA node)");
  for (size_t i = 0; i < dist.size(); ++i) {
    if (!dist[i].is_array() || dist[i].size() != h->numaNodes.size())
      r.fail("numaDistances", "row " + std::to_string(i) + " must be an array of " +
                                  std::to_string(h->numaNodes.size()) + " integers");
    std::vector<int> row;
    for (const json& d : dist[i]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > 255)
        r.fail("numaDistances", "row " + std::to_string(i) + ": distances are integers in [1, 255]");
      row.push_back(d.get<int>());
    }
    h->numaDistances.push_back(row);
  }
  const json& caches = r.array("caches", false);
  for (size_t i = 0; i < caches.size(); ++i) {
    ObjectReader c(caches[i], item(where, "caches", i));
    Cache cache;
    cache.level = static_cast<int>(c.integer("level", true, 1, 4));
    cache.type = c.str("type", true);
    if (cache.type != "data" && cache.type != "instruction" && cache.type != "unified")
      c.fail("type", "expected data, instruction or unified, got '" + cache.type + "'");
    cache.sizeBytes = static_cast<uint64_t>(c.integer("sizeBytes", false, 0, INT64_MAX));
    cache.cpus = c.cpus("cpus", false);
    c.finish();
    h->caches.push_back(cache);
  }
}

void readPci(const json& list, const std::string& where, const std::set<int>& numaIds, HostTopology* h) {
  for (size_t i = 0; i < list.size(); ++i) {
    ObjectReader p(list[i], item(where, "pci", i));
    PciEntry e;
    e.id = p.str("id", true);
    e.parent = p.str("parent", true);
    std::string kind = p.str("kind", true);
    if (kind == "hostbridge") e.kind = PciKind::kHostBridge;
    else if (kind == "bridge") e.kind = PciKind::kBridge;
    else if (kind == "device") e.kind = PciKind::kDevice;
    else p.fail("kind", "expected hostbridge, bridge or device, got '" + kind + "'");
    e.classId = p.hex("class", 0xffffff);
    e.vendor = p.hex("vendor", 0xffff);
    e.device = p.hex("device", 0xffff);
    e.numa = reference(p, "numa", numaIds, "NUMA node");
    e.linkGBps = p.number("linkGBps", false, 0, 1e6);
    p.finish();
    if (e.id.empty()) p.fail("id", "must not be empty");
    if (h->findPci(e.id)) p.fail("id", "duplicate PCI id '" + e.id + "'");
    if (e.kind == PciKind::kHostBridge && !e.parent.empty()) p.fail("parent", "a host bridge has no parent");
    if (e.kind != PciKind::kHostBridge) {
      const PciEntry* parent = h->findPci(e.parent);
      if (!parent) p.fail("parent", "'" + e.parent + "' is not an earlier pci entry (parents come first)");
      if (parent->kind == PciKind::kDevice) p.fail("parent", "'" + e.parent + "' is a device, not a bridge");
    }
    h->pci.push_back(e);
  }
}

// The PCI device a NIC or GPU sits on ("" allowed) and its NUMA node.
void readPlacement(ObjectReader& r, const std::set<int>& numaIds, const HostTopology& h, std::string* pci,
                   int* numa) {
  *pci = r.str("pci", false);
  const PciEntry* e = h.findPci(*pci);
  if (!pci->empty() && (!e || e->kind != PciKind::kDevice))
    r.fail("pci", "'" + *pci + "' is not a PCI device entry of this host");
  *numa = reference(r, "numa", numaIds, "NUMA node");
  if (*numa < 0 && !pci->empty()) *numa = h.pciNuma(*pci);
}

void readDevices(const json& j, const std::string& where, const std::set<int>& numaIds, HostTopology* h) {
  ObjectReader r(j, where);
  const json& nics = r.array("nics", false);
  for (size_t i = 0; i < nics.size(); ++i) {
    ObjectReader n(nics[i], item(where, "nics", i));
    Nic nic;
    nic.name = n.str("name", true);
    std::string kind = n.str("kind", true);
    if (kind == "netdev") nic.kind = NicKind::kNetdev;
    else if (kind == "rdma") nic.kind = NicKind::kRdma;
    else n.fail("kind", "expected netdev or rdma, got '" + kind + "'");
    readPlacement(n, numaIds, *h, &nic.pci, &nic.numa);
    nic.speedMbps = n.number("speedMbps", false, 0, 1e9);
    nic.netdev = n.str("netdev", false);
    nic.up = n.boolean("up", false, true);
    if (nic.name.empty()) n.fail("name", "must not be empty");
    n.finish();
    h->nics.push_back(nic);
  }
  const json& gpus = r.array("gpus", false);
  for (size_t i = 0; i < gpus.size(); ++i) {
    ObjectReader g(gpus[i], item(where, "gpus", i));
    Gpu gpu;
    gpu.name = g.str("name", true);
    readPlacement(g, numaIds, *h, &gpu.pci, &gpu.numa);
    g.finish();
    h->gpus.push_back(gpu);
  }
}

HostTopology readHost(const json& j, const std::string& where) {
  HostTopology h;
  ObjectReader r(j, where);
  h.hostId = r.str("hostId", false);
  h.hostname = r.str("hostname", false);
  h.source = r.str("source", false);
  std::set<int> pkgIds, numaIds;
  readCpuParts(j, where, &h, &pkgIds, &numaIds);
  readPci(r.array("pci", false), where, numaIds, &h);
  readDevices(j, where, numaIds, &h);
  // Mark the keys the helpers above read through their own readers as seen.
  for (const char* key : {"packages", "numaNodes", "cores", "numaDistances", "caches", "nics", "gpus"})
    (void)r.array(key, false);
  r.finish();
  return h;
}

}  // namespace

Status parseTopologyFile(const std::string& text, std::vector<HostTopology>* hosts) {
  if (text.size() > kMaxTopologyFileBytes)
    return invalidArgument("topology file larger than " + std::to_string(kMaxTopologyFileBytes) + " bytes");
  try {
    json j = detail::parseJson(text);
    ObjectReader top(j, "topology");
    if (top.str("format", true) != "braid-topology")
      top.fail("format", "expected \"braid-topology\" (is this a braid topology file?)");
    if (top.integer("version", true, 0, INT32_MAX) != 1)
      top.fail("version", "this braid reads format version 1 only");
    const json& list = top.array("hosts", true);
    if (list.empty()) top.fail("hosts", "at least one host is needed");
    top.finish();
    std::vector<HostTopology> out;
    for (size_t i = 0; i < list.size(); ++i) out.push_back(readHost(list[i], "hosts[" + std::to_string(i) + "]"));
    *hosts = std::move(out);
    return Status::ok();
  } catch (const std::exception& e) {
    return invalidArgument(std::string("topology file: ") + e.what());
  }
}

}  // namespace braid::topo

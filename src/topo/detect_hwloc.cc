// The hwloc detector (hwloc 2.x): packages, NUMA nodes and their distances,
// cores, caches, and the I/O tree (host bridges, PCI bridges, devices and the
// OS devices on them: netdevs, RDMA devices, GPUs). Compiled only when braid
// is built with hwloc.
#include <hwloc.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "topo/detect.h"

namespace braid::topo {
namespace {

using TopologyPtr = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;

CpuList toList(hwloc_const_bitmap_t set) {
  CpuList list;
  char* text = nullptr;
  if (set && !hwloc_bitmap_isfull(set) && hwloc_bitmap_list_asprintf(&text, set) >= 0 && text)
    (void)CpuList::parse(text, &list);
  free(text);
  return list;
}

int ancestorId(hwloc_topology_t t, hwloc_obj_type_t type, hwloc_obj_t obj) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t, type, obj);
  return a ? static_cast<int>(a->os_index) : -1;
}

// The NUMA node an I/O object hangs under, -1 when several or none.
int ioNuma(hwloc_topology_t t, hwloc_obj_t obj) {
  hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, obj);
  if (!a || !a->nodeset || hwloc_bitmap_weight(a->nodeset) != 1) return -1;
  return hwloc_bitmap_first(a->nodeset);
}

std::string busId(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%01x", domain, bus, dev, func);
  return buf;
}

std::string hostBridgeId(unsigned domain, unsigned bus) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "pci%04x:%02x", domain, bus);
  return buf;
}

// Walks the I/O children of obj; `parent` is the id of the nearest bridge above.
void walkIo(hwloc_topology_t t, hwloc_obj_t obj, const std::string& parent, HostTopology* h) {
  std::string below = parent;
  if (obj->type == HWLOC_OBJ_BRIDGE || obj->type == HWLOC_OBJ_PCI_DEVICE) {
    PciEntry e;
    if (obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      e.kind = PciKind::kHostBridge;
      e.id = hostBridgeId(obj->attr->bridge.downstream.pci.domain, obj->attr->bridge.downstream.pci.secondary_bus);
    } else {
      const hwloc_obj_attr_u::hwloc_pcidev_attr_s& p = obj->type == HWLOC_OBJ_BRIDGE ? obj->attr->bridge.upstream.pci : obj->attr->pcidev;
      e.kind = obj->type == HWLOC_OBJ_BRIDGE ? PciKind::kBridge : PciKind::kDevice;
      e.id = busId(p.domain, p.bus, p.dev, p.func);
      e.classId = p.class_id, e.vendor = p.vendor_id, e.device = p.device_id;
      e.linkGBps = p.linkspeed;
      e.parent = parent;
      if (e.parent.empty()) {  // a PCI object with no host bridge above: give it one
        std::string hb = hostBridgeId(p.domain, p.bus);
        if (!h->findPci(hb)) h->pci.push_back({hb, "", PciKind::kHostBridge, 0, 0, 0, ioNuma(t, obj), 0});
        e.parent = hb;
      }
    }
    e.numa = ioNuma(t, obj);
    if (!h->findPci(e.id)) h->pci.push_back(e);
    below = e.id;
    if (e.kind == PciKind::kDevice && detail::isGpu(e.classId, e.vendor))
      h->gpus.push_back({"gpu" + std::to_string(h->gpus.size()), e.id, e.numa});
  } else if (obj->type == HWLOC_OBJ_OS_DEVICE && obj->name) {
    bool onPci = obj->parent && obj->parent->type == HWLOC_OBJ_PCI_DEVICE;
    auto osdev = obj->attr->osdev.type;
    if (osdev == HWLOC_OBJ_OSDEV_NETWORK || osdev == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      NicKind kind = osdev == HWLOC_OBJ_OSDEV_NETWORK ? NicKind::kNetdev : NicKind::kRdma;
      h->nics.push_back({obj->name, kind, onPci ? parent : "", ioNuma(t, obj), 0, "", true});
    }
  }
  for (hwloc_obj_t c = obj->io_first_child; c; c = c->next_sibling) walkIo(t, c, below, h);
  for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling) walkIo(t, c, below, h);
}

void readCpuSide(hwloc_topology_t t, HostTopology* h) {
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, o));)
    h->packages.push_back({static_cast<int>(o->os_index), toList(o->cpuset)});
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o));)
    h->numaNodes.push_back({static_cast<int>(o->os_index), ancestorId(t, HWLOC_OBJ_PACKAGE, o), toList(o->cpuset),
                            o->attr->numanode.local_memory});
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, o));) {
    Core c{static_cast<int>(o->os_index), ancestorId(t, HWLOC_OBJ_PACKAGE, o), -1, toList(o->cpuset)};
    c.numa = h->numaOfCpus(c.pus);
    h->cores.push_back(c);
  }
  // A machine without packages or cores in hwloc's eyes (some VMs): still at least one of each.
  CpuList all = toList(hwloc_topology_get_topology_cpuset(t));
  if (h->packages.empty()) h->packages.push_back({0, all});
  if (h->numaNodes.empty()) h->numaNodes.push_back({0, h->packages[0].id, all, 0});
  if (h->cores.empty())
    for (int pu : all.cpus()) h->cores.push_back({pu, h->packages[0].id, h->numaOfCpus(CpuList({pu})), CpuList({pu})});
  for (int d = 0; d < hwloc_topology_get_depth(t); ++d) {
    hwloc_obj_type_t type = hwloc_get_depth_type(t, d);
    if (!hwloc_obj_type_is_cache(type)) continue;
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_depth(t, d, o));) {
      const char* kind = o->attr->cache.type == HWLOC_OBJ_CACHE_DATA          ? "data"
                         : o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction"
                                                                                : "unified";
      if (o->attr->cache.depth >= 1 && o->attr->cache.depth <= 4)
        h->caches.push_back({static_cast<int>(o->attr->cache.depth), kind, o->attr->cache.size, toList(o->cpuset)});
    }
  }
}

void readDistances(hwloc_topology_t t, HostTopology* h) {
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
      nr == 0 || !dist)
    return;
  if (dist->nbobjs == h->numaNodes.size()) {
    std::vector<std::vector<int>> matrix(dist->nbobjs, std::vector<int>(dist->nbobjs, 0));
    bool ok = true;
    for (unsigned i = 0; i < dist->nbobjs && ok; ++i)
      for (unsigned j = 0; j < dist->nbobjs && ok; ++j) {
        // hwloc lists the objects in its own order: map them to ours.
        auto index = [&](hwloc_obj_t o) {
          for (size_t k = 0; k < h->numaNodes.size(); ++k)
            if (h->numaNodes[k].id == static_cast<int>(o->os_index)) return static_cast<int>(k);
          return -1;
        };
        int a = index(dist->objs[i]), b = index(dist->objs[j]);
        uint64_t v = dist->values[i * dist->nbobjs + j];
        ok = a >= 0 && b >= 0 && v >= 1 && v <= 255;
        if (ok) matrix[a][b] = static_cast<int>(v);
      }
    if (ok) h->numaDistances = matrix;
  }
  hwloc_distances_release(t, dist);
}

}  // namespace

bool builtWithHwloc() { return true; }

Status detectHwloc(HostTopology* out, const HwlocInput& input) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return internalError("hwloc_topology_init failed");
  TopologyPtr topo(raw, &hwloc_topology_destroy);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // hwloc's Linux backend reads the PCI tree from /sys by itself. The plugins
  // that would add to it cost more than they give here: "pci" (libpciaccess)
  // leaks at every load, "opencl" and "cuda" initialise GPU runtimes inside
  // the caller's process (slow, and not fork-safe), "gl" talks to an X server.
  for (const char* component : {"pci", "opencl", "cuda", "gl"})
    hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);
  if (!input.synthetic.empty() && hwloc_topology_set_synthetic(raw, input.synthetic.c_str()) != 0)
    return invalidArgument("hwloc rejected the synthetic description '" + input.synthetic + "'");
  if (hwloc_topology_load(raw) != 0) return systemError("hwloc_topology_load", errno);
  HostTopology h;
  h.source = input.synthetic.empty() ? "hwloc" : "hwloc synthetic: " + input.synthetic;
  readCpuSide(raw, &h);
  readDistances(raw, &h);
  walkIo(raw, hwloc_get_root_obj(raw), "", &h);
  // Only the live machine has a /sys that matches what hwloc saw.
  if (input.synthetic.empty()) detail::completeDevices(&h, "");
  detail::fillIdentity(&h);
  *out = std::move(h);
  return Status::ok();
}

}  // namespace braid::topo

#include "topo/bind.h"

#include <pthread.h>
#include <sched.h>

#ifdef BRAID_HAVE_HWLOC
#include <hwloc.h>

#include <mutex>
#endif

#include "base/env.h"
#include "base/log.h"

namespace braid::topo {

Status currentAffinity(CpuList* out) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int rc = pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) return systemError("pthread_getaffinity_np", rc);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  *out = CpuList(std::move(cpus));
  return Status::ok();
}

namespace {

#ifdef BRAID_HAVE_HWLOC
// One I/O-free topology of the live machine, loaded on first use and kept:
// hwloc_set_cpubind needs one, and reading it is thread-safe once loaded.
hwloc_topology_t bindTopology() {
  static hwloc_topology_t topo = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return;
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      return;
    }
    topo = t;
  });
  return topo;
}
#endif

Status applyBinding(const CpuList& cpus) {
#ifdef BRAID_HAVE_HWLOC
  if (hwloc_topology_t t = bindTopology()) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int c : cpus.cpus()) hwloc_bitmap_set(set, static_cast<unsigned>(c));
    int rc = hwloc_set_cpubind(t, set, HWLOC_CPUBIND_THREAD);
    int err = errno;
    hwloc_bitmap_free(set);
    if (rc != 0) return systemError("hwloc_set_cpubind(" + cpus.toString() + ")", err);
    return Status::ok();
  }
#endif
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus.cpus())
    if (c < CPU_SETSIZE) CPU_SET(c, &set);
  int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) return systemError("pthread_setaffinity_np(" + cpus.toString() + ")", rc);
  return Status::ok();
}

CpuList numaCpus(const HostTopology& host, const std::vector<int>& nodes) {
  CpuList cpus;
  for (int id : nodes)
    if (const NumaNode* n = host.findNuma(id)) cpus = cpus.unite(n->cpus);
  return cpus;
}

}  // namespace

bool bindingEnabled() { return env::getBool("BRAID_BIND"); }
bool bindingLeftToDefault() { return !env::raw("BRAID_BIND").has_value(); }

Status bindThreadToCpus(const CpuList& cpus, CpuList* boundTo) {
  CpuList allowed;
  BRAID_RETURN_IF_ERROR(currentAffinity(&allowed));
  CpuList target = cpus.intersect(allowed);
  if (target.empty())
    return invalidArgument("cannot bind to CPUs " + cpus.toString() + ": this thread may only run on " +
                           allowed.toString() + " (a topology of another machine, or taskset/cgroup limits?)");
  BRAID_RETURN_IF_ERROR(applyBinding(target));
  BRAID_INFO("bound thread to CPUs %s", target.toString().c_str());
  if (boundTo) *boundTo = target;
  return Status::ok();
}

Status bindThreadNearNuma(const HostTopology& host, int numa, CpuList* boundTo) {
  if (boundTo) *boundTo = CpuList();
  if (!bindingEnabled()) return Status::ok();
  if (!host.findNuma(numa)) return invalidArgument("bind: no NUMA node " + std::to_string(numa) + " on this host");
  return bindThreadToCpus(numaCpus(host, {numa}), boundTo).prefix("bind near NUMA node " + std::to_string(numa));
}

Status bindThreadNearNic(const HostTopology& host, const std::string& nicName, CpuList* boundTo) {
  if (boundTo) *boundTo = CpuList();
  if (!bindingEnabled()) return Status::ok();
  for (size_t i = 0; i < host.nics.size(); ++i)
    if (host.nics[i].name == nicName)
      return bindThreadToCpus(numaCpus(host, host.numaNearNic(static_cast<int>(i))), boundTo)
          .prefix("bind near NIC " + nicName);
  return invalidArgument("bind: no NIC named '" + nicName + "' on this host");
}

}  // namespace braid::topo

// Binding a thread near a device (BRAID_BIND=1). The engine calls this on its
// progress threads so that the CPU driving a NIC sits on that NIC's NUMA node.
// Off by default: binding is a policy users opt into, since it fights with
// their own pinning (taskset, numactl, launcher binding).
#pragma once

#include <string>

#include "base/status.h"
#include "topo/model.h"

namespace braid::topo {

// BRAID_BIND is set to a true value (1, true, yes, on).
bool bindingEnabled();
// BRAID_BIND is not set at all (engine threads then take their CPU share,
// bind_policy.h's engineCpuShare; set to 0, nothing is bound).
bool bindingLeftToDefault();

// The CPUs the calling thread may run on (its affinity mask).
Status currentAffinity(CpuList* out);

// Binds the calling thread to the CPUs of the NUMA node nearest NIC `nicName`
// (its own node; all nodes when unknown), restricted to the CPUs this thread
// may already use. With BRAID_BIND off: does nothing, *boundTo empty, ok.
// InvalidArgument for an unknown NIC or when none of those CPUs is available
// (e.g. the topology came from BRAID_TOPO_FILE and describes another machine).
Status bindThreadNearNic(const HostTopology& host, const std::string& nicName, CpuList* boundTo);
// The same for NUMA node `numa` (an id of host.numaNodes).
Status bindThreadNearNuma(const HostTopology& host, int numa, CpuList* boundTo);

// Binds the calling thread to `cpus` ∩ its current affinity, whatever
// BRAID_BIND says (uses hwloc_set_cpubind when built with hwloc).
Status bindThreadToCpus(const CpuList& cpus, CpuList* boundTo);

}  // namespace braid::topo

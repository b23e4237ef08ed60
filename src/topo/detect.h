// Finding this host's topology. localTopology() is what the rest of braid
// calls: it honours BRAID_TOPO_FILE (describe a machine instead of detecting)
// and BRAID_TOPO_DUMP_FILE (write what was found). Detection uses hwloc when
// braid was built with it and falls back to /proc + /sys otherwise (cores,
// NUMA nodes, caches, the PCI tree, netdevs and RDMA devices).
//
// Cost: a detection with PCI discovery takes milliseconds to tens of
// milliseconds; callers that need it repeatedly should keep the result.
// Thread-safe (no shared state).
#pragma once

#include <string>

#include "base/status.h"
#include "topo/model.h"

namespace braid::topo {

// Whether this build has hwloc (compile-time).
bool builtWithHwloc();

// BRAID_TOPO_FILE if set (the host matching bootstrap::localHostId()), else
// detectTopology(). Then, if BRAID_TOPO_DUMP_FILE is set, writes the result
// there (a failure to write is logged, not returned: the dump is a debugging aid).
Status localTopology(HostTopology* out);

// Detection only: hwloc when built (falling back to sysfs if hwloc fails), else sysfs.
Status detectTopology(HostTopology* out);

// The /proc + /sys detector; `sysRoot` prefixes every path ("" for the real
// /sys), so tests can point it at a directory without PCI information.
Status detectSysfs(HostTopology* out, const std::string& sysRoot = "");

// The hwloc detector. `synthetic` (hwloc's synthetic description, e.g.
// "pack:2 numa:1 core:4 pu:2") replaces the live machine when not empty: it
// has no I/O at all, which is how tests check a machine without PCI
// information. NotSupported when braid was built without hwloc.
struct HwlocInput {
  std::string synthetic;
};
Status detectHwloc(HostTopology* out, const HwlocInput& input = {});

namespace detail {
// Shared by both detectors: adds the netdevs of <sysRoot>/sys/class/net and
// RDMA devices of <sysRoot>/sys/class/infiniband that are not listed yet, and
// fills speed, state and NUMA node from sysfs; then gives every NIC and GPU
// without a NUMA node its PCI device's.
void completeDevices(HostTopology* h, const std::string& sysRoot);
// Host name and host id (bootstrap::localHostId()) of this process.
void fillIdentity(HostTopology* h);
// Is a PCI device of this class / vendor a GPU (3D controller, or a display
// controller by NVIDIA or AMD)?
bool isGpu(uint32_t classId, uint32_t vendor);
}  // namespace detail

}  // namespace braid::topo

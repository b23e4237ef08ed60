#include "topo/detect.h"

#include "base/env.h"
#include "base/log.h"
#include "core/bootstrap/host_id.h"
#include "topo/topo_file.h"

namespace braid::topo {

#ifndef BRAID_HAVE_HWLOC
bool builtWithHwloc() { return false; }

Status detectHwloc(HostTopology*, const HwlocInput&) {
  return notSupported("braid was built without hwloc (install libhwloc-dev and rebuild)");
}
#endif

Status detectTopology(HostTopology* out) {
  if (builtWithHwloc()) {
    Status st = detectHwloc(out);
    if (st.isOk()) return st;
    BRAID_WARN("hwloc topology detection failed (%s); using /proc and /sys", st.message().c_str());
  }
  return detectSysfs(out);
}

Status localTopology(HostTopology* out) {
  std::string file = env::getString("BRAID_TOPO_FILE");
  if (!file.empty()) {
    BRAID_RETURN_IF_ERROR(loadTopologyFile(file, bootstrap::localHostId(), out).prefix("BRAID_TOPO_FILE"));
  } else {
    BRAID_RETURN_IF_ERROR(detectTopology(out));
  }
  std::string dump = env::getString("BRAID_TOPO_DUMP_FILE");
  if (!dump.empty()) {
    Status st = saveTopologyFile(dump, *out);
    if (!st.isOk()) BRAID_WARN("BRAID_TOPO_DUMP_FILE: %s", st.message().c_str());
  }
  return Status::ok();
}

}  // namespace braid::topo

#include "core/engine_thread.h"

#include "base/env.h"
#include "base/hot_thread_local.h"
#include "base/log.h"
#include "core/comm_topology.h"
#include "topo/bind.h"
#include "topo/bind_policy.h"

namespace braid::core {
namespace {
BRAID_HOT_THREAD_LOCAL bool tlsEngine = false;
BRAID_HOT_THREAD_LOCAL bool tlsBindTried = false;
}  // namespace

void markEngineThread() { tlsEngine = true; }
bool isEngineThread() { return tlsEngine; }

void bindEngineThreadOnce(const topo::CommTopology& comm, int rank) {
  // Decided once per engine thread: every op passes here, and reading the
  // environment on each one showed up in small-message profiles.
  if (!tlsEngine || tlsBindTried) return;
  tlsBindTried = true;
  if (topo::bindingLeftToDefault()) {
    std::string why;
    const topo::CpuList share = topo::engineCpuShare(comm, rank, &why);
    topo::CpuList bound;
    Status st = share.empty() ? Status::ok() : topo::bindThreadToCpus(share, &bound);
    if (!st.isOk())
      BRAID_WARN("engine thread: binding to its CPU share (%s) failed: %s", why.c_str(),
                 st.message().c_str());
    else
      BRAID_INFO("engine thread: %s%s%s", share.empty() ? "left unbound: " : "", why.c_str(),
                 bound.empty() ? "" : (", CPUs " + bound.toString()).c_str());
    return;
  }
  if (!topo::bindingEnabled()) return;
  const topo::HostTopology* host = nullptr;
  if (!localHostTopology(&host).isOk() || host == nullptr) return;
  const topo::BindTarget target = chooseBindTarget(comm, rank, env::raw("BRAID_SOCKET_IFNAME").value_or(""));
  topo::CpuList bound;
  Status st;
  if (target.kind == topo::BindTarget::Kind::kNic) st = topo::bindThreadNearNic(*host, target.nic, &bound);
  else if (target.kind == topo::BindTarget::Kind::kNuma) st = topo::bindThreadNearNuma(*host, target.numa, &bound);
  if (!st.isOk()) {
    BRAID_WARN("BRAID_BIND: %s failed: %s", target.why.c_str(), st.message().c_str());
    return;
  }
  BRAID_INFO("BRAID_BIND: engine thread %s%s%s", target.why.c_str(), bound.empty() ? "" : ", CPUs ",
             bound.empty() ? "" : bound.toString().c_str());
}

}  // namespace braid::core

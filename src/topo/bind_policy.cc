#include "topo/bind_policy.h"

namespace braid::topo {
namespace {

bool matches(const std::string& name, const std::string& ifname) {
  if (ifname.empty() || ifname[0] == '^') return false;
  if (ifname[0] == '=') return name == ifname.substr(1);
  return name.rfind(ifname, 0) == 0;
}

// The NIC traffic to other hosts most likely uses: the one BRAID_SOCKET_IFNAME
// names, else one that is up and not loopback, RDMA devices first (when
// present they carry the data), and among those one on the rank's own NUMA
// node when there is one (as NCCL pairs each GPU with its nearest NIC).
const Nic* pickNic(const HostGroup& host, int numa, const std::string& ifname) {
  for (const Nic& n : host.nics)
    if (matches(n.name, ifname)) return &n;
  for (NicKind kind : {NicKind::kRdma, NicKind::kNetdev}) {
    const Nic* first = nullptr;
    for (const Nic& n : host.nics) {
      if (n.kind != kind || !n.up || n.name == "lo") continue;
      if (numa >= 0 && n.numa == numa) return &n;
      if (!first) first = &n;
    }
    if (first) return first;
  }
  return nullptr;
}

}  // namespace

BindTarget chooseBindTarget(const CommTopology& comm, int rank, const std::string& socketIfname) {
  BindTarget t;
  if (rank < 0 || rank >= comm.nranks()) {
    t.why = "rank out of range: left unbound";
    return t;
  }
  bool offHost = false;
  for (int p = 0; p < comm.nranks() && !offHost; ++p) offHost = !comm.sameHost(rank, p);
  const HostGroup& host = comm.hosts[comm.hostOf[rank]];
  if (offHost) {
    if (const Nic* nic = pickNic(host, comm.ranks[rank].numa, socketIfname)) {
      t.kind = BindTarget::Kind::kNic;
      t.nic = nic->name;
      t.why = "peers on other hosts: near NIC " + nic->name;
      return t;
    }
  }
  const int numa = comm.ranks[rank].numa;
  if (numa >= 0) {
    t.kind = BindTarget::Kind::kNuma;
    t.numa = numa;
    t.why = std::string(offHost ? "no NIC known" : "all peers on this host") + ": on its NUMA node " +
            std::to_string(numa);
    return t;
  }
  t.why = "the rank spans several NUMA nodes and no NIC decides: left unbound";
  return t;
}

}  // namespace braid::topo

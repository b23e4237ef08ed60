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

CpuList engineCpuShare(const CommTopology& comm, int rank, std::string* why) {
  if (rank < 0 || rank >= comm.nranks()) {
    *why = "rank out of range";
    return {};
  }
  const CpuList& mine = comm.ranks[rank].cpus;
  if (mine.empty()) {
    *why = "its CPUs are not known";
    return {};
  }
  // The ranks that may run on exactly these CPUs, in rank order: this
  // rank's place among them picks its share, the same on every rank.
  int place = 0, sharing = 0;
  for (int r : comm.hosts[comm.hostOf[rank]].ranks) {
    if (!(comm.ranks[r].cpus == mine)) continue;
    if (r < rank) ++place;
    ++sharing;
  }
  if (sharing == 1) {
    *why = "no other rank of its host runs on its CPUs";
    return {};
  }
  const size_t n = mine.size(), k = static_cast<size_t>(sharing), i = static_cast<size_t>(place);
  if (k > n) {
    *why = std::to_string(k) + " ranks share its " + std::to_string(n) + " CPUs";
    return {};
  }
  const std::vector<int>& cpus = mine.cpus();
  CpuList share(std::vector<int>(cpus.begin() + static_cast<long>(i * n / k),
                                 cpus.begin() + static_cast<long>((i + 1) * n / k)));
  *why = "share " + std::to_string(i + 1) + " of " + std::to_string(k) + " of CPUs " + mine.toString();
  return share;
}

}  // namespace braid::topo

#include "topo/comm_view.h"

#include <algorithm>
#include <map>

#include "base/log.h"
#include "core/bootstrap/host_id.h"
#include "topo/bind.h"
#include "topo/json_check.h"

namespace braid::topo {
namespace {

using detail::JsonError;
using detail::ObjectReader;
using nlohmann::json;

constexpr int kRankViewVersion = 1;
constexpr int kMaxRanks = 1 << 24;

json viewToJson(const RankView& v) {
  json nics = json::array();
  for (const Nic& n : v.nics)
    nics.push_back({{"name", n.name}, {"kind", n.kind == NicKind::kRdma ? "rdma" : "netdev"}, {"pci", n.pci},
                    {"numa", n.numa}, {"speedMbps", n.speedMbps}, {"netdev", n.netdev}, {"up", n.up}});
  return {{"v", kRankViewVersion},  {"rank", v.rank}, {"hostId", v.hostId},
          {"hostname", v.hostname}, {"numa", v.numa}, {"numaCount", v.numaCount},
          {"gpu", v.gpu},           {"nics", nics},   {"cpus", v.cpus.toString()}};
}

RankView viewFromJson(const json& j, const std::string& where) {
  ObjectReader r(j, where);
  if (r.integer("v", true, 0, INT32_MAX) != kRankViewVersion) r.fail("v", "unknown rank view version");
  RankView v;
  v.rank = static_cast<int>(r.integer("rank", true, 0, kMaxRanks));
  v.hostId = r.str("hostId", true);
  if (v.hostId.empty()) r.fail("hostId", "must not be empty");
  v.hostname = r.str("hostname", true);
  v.numa = static_cast<int>(r.integer("numa", true, -1, kMaxCpu));
  v.numaCount = static_cast<int>(r.integer("numaCount", true, 1, kMaxCpu));
  v.gpu = static_cast<int>(r.integer("gpu", true, -1, kMaxCpu));
  const json& nics = r.array("nics", true);
  if (nics.size() > kMaxRankViewNics) r.fail("nics", "too many NICs");
  for (size_t i = 0; i < nics.size(); ++i) {
    ObjectReader n(nics[i], where + ".nics[" + std::to_string(i) + "]");
    Nic nic;
    nic.name = n.str("name", true);
    std::string kind = n.str("kind", true);
    if (kind != "rdma" && kind != "netdev") n.fail("kind", "expected netdev or rdma");
    nic.kind = kind == "rdma" ? NicKind::kRdma : NicKind::kNetdev;
    nic.pci = n.str("pci", true);
    nic.numa = static_cast<int>(n.integer("numa", true, -1, kMaxCpu));
    nic.speedMbps = n.number("speedMbps", true, 0, 1e9);
    nic.netdev = n.str("netdev", true);
    nic.up = n.boolean("up", true, true);
    n.finish();
    v.nics.push_back(nic);
  }
  v.cpus = r.cpus("cpus", false);
  r.finish();
  return v;
}

bool sameNics(const std::vector<Nic>& a, const std::vector<Nic>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].kind != b[i].kind || a[i].numa != b[i].numa) return false;
  return true;
}

}  // namespace

Status makeRankView(const HostTopology& host, int rank, RankView* out) {
  RankView v;
  v.rank = rank;
  v.hostId = bootstrap::localHostId();
  v.hostname = host.hostname;
  v.numaCount = std::max<int>(1, static_cast<int>(host.numaNodes.size()));
  v.nics = host.nics;
  BRAID_RETURN_IF_ERROR(currentAffinity(&v.cpus));
  v.numa = host.numaOfCpus(v.cpus);
  *out = std::move(v);
  return Status::ok();
}

std::string encodeRankView(const RankView& view) { return viewToJson(view).dump(); }

Status decodeRankView(const std::string& bytes, RankView* out) {
  if (bytes.size() > kMaxRankViewBytes) return invalidArgument("rank view larger than 1 MiB");
  try {
    *out = viewFromJson(detail::parseJson(bytes), "rank view");
    return Status::ok();
  } catch (const std::exception& e) {
    return invalidArgument(e.what());
  }
}

bool CommTopology::sameHost(int a, int b) const {
  if (a < 0 || b < 0 || a >= nranks() || b >= nranks()) return false;
  return hostOf[a] == hostOf[b];
}

bool CommTopology::sameNuma(int a, int b) const {
  return sameHost(a, b) && ranks[a].numa >= 0 && ranks[a].numa == ranks[b].numa;
}

std::vector<int> CommTopology::ranksOnNuma(int rank, int numa) const {
  std::vector<int> out;
  if (rank < 0 || rank >= nranks()) return out;
  for (int r : hosts[hostOf[rank]].ranks)
    if (ranks[r].numa == numa) out.push_back(r);
  return out;
}

bool CommTopology::competesForCpus(int rank) const {
  if (rank < 0 || rank >= nranks()) return false;
  const CpuList& mine = ranks[rank].cpus;
  int sharing = 0;
  CpuList held;
  for (int r : hosts[hostOf[rank]].ranks) {
    const CpuList& theirs = ranks[r].cpus;
    if (r != rank && !mine.empty() && !theirs.empty() && theirs.intersect(mine).empty()) continue;
    ++sharing;
    held = held.unite(theirs);
  }
  return static_cast<size_t>(sharing) > std::max<size_t>(held.size(), 1);
}

Status mergeRankViews(std::vector<RankView> views, CommTopology* out) {
  if (views.empty()) return invalidArgument("merging rank views: no views");
  CommTopology c;
  std::map<std::string, int> hostIndex;
  for (size_t i = 0; i < views.size(); ++i) {
    const RankView& v = views[i];
    if (v.rank != static_cast<int>(i))
      return invalidArgument("merging rank views: entry " + std::to_string(i) + " is rank " + std::to_string(v.rank) +
                             "'s view (each rank exactly once, in rank order)");
    if (v.hostId.empty()) return invalidArgument("merging rank views: rank " + std::to_string(i) + " has no host id");
    auto [it, added] = hostIndex.emplace(v.hostId, static_cast<int>(c.hosts.size()));
    if (added) c.hosts.push_back({v.hostId, v.hostname, {}, v.numaCount, v.nics});
    HostGroup& h = c.hosts[it->second];
    if (!added && (h.numaCount != v.numaCount || !sameNics(h.nics, v.nics)))
      BRAID_WARN("rank %d describes host %s differently from rank %d (BRAID_TOPO_FILE set on some ranks only?); "
                 "using rank %d's description", v.rank, v.hostname.c_str(), h.ranks[0], h.ranks[0]);
    c.hostOf.push_back(it->second);
    c.localRank.push_back(static_cast<int>(h.ranks.size()));
    h.ranks.push_back(v.rank);
  }
  c.ranks = std::move(views);
  *out = std::move(c);
  return Status::ok();
}

std::string encodeCommTopology(const CommTopology& comm) {
  json list = json::array();
  for (const RankView& v : comm.ranks) list.push_back(viewToJson(v));
  return json{{"format", "braid-comm-topology"}, {"v", 1}, {"ranks", list}}.dump();
}

Status decodeCommTopology(const std::string& bytes, CommTopology* out) {
  if (bytes.size() > kMaxRankViewBytes * 64) return invalidArgument("communicator topology larger than 64 MiB");
  std::vector<RankView> views;
  try {
    json j = detail::parseJson(bytes);
    ObjectReader r(j, "communicator topology");
    if (r.str("format", true) != "braid-comm-topology") r.fail("format", "not a braid communicator topology");
    if (r.integer("v", true, 0, INT32_MAX) != 1) r.fail("v", "unknown version");
    const json& list = r.array("ranks", true);
    r.finish();
    for (size_t i = 0; i < list.size(); ++i) views.push_back(viewFromJson(list[i], "ranks[" + std::to_string(i) + "]"));
  } catch (const std::exception& e) {
    return invalidArgument(e.what());
  }
  return mergeRankViews(std::move(views), out);
}

}  // namespace braid::topo

// The communicator-wide view of where ranks run. Each rank describes itself
// in a small RankView (its host id, NUMA node, its host's NICs), the
// communicator gathers every rank's encoded view over the bootstrap, and
// mergeRankViews() turns them into a CommTopology: which ranks share a host,
// which share a NUMA node, and each host's NICs. Every rank merges the same
// views in the same order, so every rank holds the same CommTopology.
//
// Bytes from other ranks are untrusted: decode*() refuse anything malformed
// with InvalidArgument (never a crash), and merging refuses inconsistent sets.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "topo/model.h"

namespace braid::topo {

constexpr size_t kMaxRankViewBytes = 1u << 20;
constexpr size_t kMaxRankViewNics = 4096;

struct RankView {
  int rank = -1;
  std::string hostId;    // bootstrap::localHostId() of that rank
  std::string hostname;  // for messages
  int numa = -1;         // the NUMA node (id) holding every CPU the rank may run on; -1: several / unknown
  int numaCount = 1;     // NUMA nodes on its host
  int gpu = -1;          // the GPU it drives (index on its host), -1: none
  std::vector<Nic> nics; // its host's NICs
  CpuList cpus;          // the CPUs it may run on (its affinity at init); empty: not known
};

// This process's view: the host id from bootstrap::localHostId() and the NUMA
// node from the calling thread's CPU affinity.
Status makeRankView(const HostTopology& host, int rank, RankView* out);

std::string encodeRankView(const RankView& view);
Status decodeRankView(const std::string& bytes, RankView* out);

struct HostGroup {
  std::string hostId, hostname;
  std::vector<int> ranks;  // ascending
  int numaCount = 1;
  std::vector<Nic> nics;   // as described by the host's lowest rank
};

struct CommTopology {
  std::vector<RankView> ranks;  // index = rank
  std::vector<HostGroup> hosts; // in order of each host's lowest rank
  std::vector<int> hostOf;      // rank -> index into hosts
  std::vector<int> localRank;   // rank -> position among its host's ranks

  int nranks() const { return static_cast<int>(ranks.size()); }
  bool sameHost(int a, int b) const;
  // Same host and the same known NUMA node.
  bool sameNuma(int a, int b) const;
  // Ranks on the host of `rank` whose NUMA node is `numa`.
  std::vector<int> ranksOnNuma(int rank, int numa) const;
  // Whether `rank` competes for CPUs: the ranks of its host whose CPU sets
  // overlap its own (itself included) outnumber the CPUs those sets hold. A
  // rank whose set is not known counts as overlapping and adds no CPU.
  // Ranks a launcher pinned one to a core each do not compete, though each
  // sees one CPU; ranks sharing a host's CPUs unpinned compete once they
  // outnumber them.
  bool competesForCpus(int rank) const;
};

// views[i] must be rank i's view, i = 0..n-1. Ranks of one host that disagree
// about its NICs or NUMA node count (e.g. one was given BRAID_TOPO_FILE and
// another not) are merged with the lowest rank's description and a warning.
Status mergeRankViews(std::vector<RankView> views, CommTopology* out);

// A CommTopology as bytes (its rank views) and back (decoded, then merged).
std::string encodeCommTopology(const CommTopology& comm);
Status decodeCommTopology(const std::string& bytes, CommTopology* out);

}  // namespace braid::topo

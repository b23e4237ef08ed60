// The communicator-wide topology: every rank describes itself (host, NUMA node,
// the host's NICs; src/topo) and the descriptions are gathered over the
// bootstrap at init into one view that transport choice, the tuner and
// hierarchical algorithms read.
//
// This host's topology is detected once per process (about 30 ms with hwloc)
// and reused by later communicators. A bad BRAID_TOPO_FILE fails init with the
// file's error; a detection failure only warns (the view then knows hosts and
// ranks, not NUMA nodes or NICs).
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "topo/comm_view.h"

namespace braid::bootstrap {
class Bootstrap;
}

namespace braid::core {

// This process's host, detected once (BRAID_TOPO_FILE when set) and kept.
Status localHostTopology(const topo::HostTopology** out);

Status gatherTopology(bootstrap::Bootstrap& bootstrap, topo::CommTopology* out);

// gatherTopology's receiving half, on bytes from the other ranks: sizes[r] is
// rank r's view length (first allGather), slots holds one slot per rank of the
// largest of them (second allGather). RemoteError for a size over
// topo::kMaxRankViewBytes, InvalidArgument for a malformed view or set.
Status decodeGatheredTopology(const std::vector<uint64_t>& sizes, const std::vector<char>& slots,
                              topo::CommTopology* out);

}  // namespace braid::core

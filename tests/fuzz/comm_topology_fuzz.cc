// The topology exchange at communicator init (core/comm_topology.h): every
// rank's view arrives from a peer as JSON in a fixed-size slot, with a length
// gathered beforehand, and is decoded and merged into the communicator's
// topology; decodeCommTopology (the same views as one document) too.
// Input: a control byte; bit 7 set: the rest is one communicator-topology
// document. Otherwise 1 + (byte % 8) ranks, each a u16 length then that many
// bytes (the rank's view; missing bytes are zeros, as in a slot).
// Properties: no crash, no exception escapes; an accepted topology is
// consistent (one view per rank, every rank in exactly one host group at its
// local index) and survives encodeCommTopology / decodeCommTopology unchanged.
#include <string>
#include <vector>

#include "core/comm_topology.h"
#include "fuzz_input.h"
#include "fuzz_target.h"
#include "topo/comm_view.h"

using braid::topo::CommTopology;

namespace {

void checkConsistent(const CommTopology& t, size_t n) {
  BRAID_FUZZ_CHECK(t.ranks.size() == n && t.hostOf.size() == n && t.localRank.size() == n,
                   "one entry per rank");
  for (size_t r = 0; r < n; ++r) {
    const int h = t.hostOf[r];
    BRAID_FUZZ_CHECK(h >= 0 && static_cast<size_t>(h) < t.hosts.size(), "rank's host exists");
    const std::vector<int>& ranks = t.hosts[h].ranks;
    const int at = t.localRank[r];
    BRAID_FUZZ_CHECK(at >= 0 && static_cast<size_t>(at) < ranks.size() && ranks[at] == static_cast<int>(r),
                     "rank sits at its local index in its host group");
    BRAID_FUZZ_CHECK(t.sameHost(static_cast<int>(r), static_cast<int>(r)), "a rank shares its own host");
    (void)t.ranksOnNuma(static_cast<int>(r), t.ranks[r].numa);
  }
  const std::string encoded = braid::topo::encodeCommTopology(t);
  CommTopology back;
  BRAID_FUZZ_CHECK(braid::topo::decodeCommTopology(encoded, &back).isOk(),
                   "an accepted topology decodes again");
  BRAID_FUZZ_CHECK(braid::topo::encodeCommTopology(back) == encoded, "and encodes to the same bytes");
}

}  // namespace

BRAID_FUZZ_TARGET(comm_topology) {
  braid::fuzz::FuzzInput in(data, size);
  const uint8_t control = in.u8();
  CommTopology out;
  if (control & 0x80) {
    const std::vector<uint8_t> doc = in.rest();
    if (braid::topo::decodeCommTopology(std::string(doc.begin(), doc.end()), &out).isOk())
      checkConsistent(out, out.ranks.size());
    return 0;
  }
  const size_t n = 1 + control % 8;
  std::vector<std::vector<uint8_t>> views(n);
  std::vector<uint64_t> sizes(n);
  size_t slot = 0;
  for (size_t r = 0; r < n; ++r) {
    sizes[r] = in.u16();
    views[r] = in.padded(sizes[r]);
    slot = std::max<size_t>(slot, sizes[r]);
  }
  std::vector<char> slots(n * slot);
  for (size_t r = 0; r < n; ++r) std::copy(views[r].begin(), views[r].end(), slots.begin() + r * slot);
  if (braid::core::decodeGatheredTopology(sizes, slots, &out).isOk()) checkConsistent(out, n);
  return 0;
}

// Pairwise all-to-all(v): rank r sends block (r+k) to rank r+k and receives
// block (r-k) from rank r-k for k = 1..N-1, all posted at once so the
// transport moves every pair concurrently; the own block is a local copy.
// Blocks go straight from the input to the wire and from the wire into the
// output.
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildPairwise(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t es = a.elemSize();
  const bool v = a.collective == Collective::kAllToAllv;
  const uint8_t tag = static_cast<uint8_t>(a.collective);
  auto sendBlock = [&](int p) -> Region {
    return v ? Region{kInput, a.sendDispls[p] * es, a.sendCounts[p] * es}
             : Region{kInput, p * a.count * es, a.count * es};
  };
  auto recvBlock = [&](int p) -> Region {
    return v ? Region{kOutput, a.recvDispls[p] * es, a.recvCounts[p] * es}
             : Region{kOutput, p * a.count * es, a.count * es};
  };
  out->add(copyStep(sendBlock(r), recvBlock(r)));
  for (int k = 1; k < n; ++k) {
    out->add(recvStep((r - k + n) % n, recvBlock((r - k + n) % n), tag));
    out->add(sendStep((r + k) % n, sendBlock((r + k) % n), tag));
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(alltoall_pairwise, Collective::kAllToAll, "pairwise", buildPairwise);
BRAID_REGISTER_ALGORITHM(alltoallv_pairwise, Collective::kAllToAllv, "pairwise", buildPairwise);

}  // namespace braid::algo

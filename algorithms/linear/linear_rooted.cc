// Linear gather and scatter: the root exchanges one block with every other
// rank, all posted at once, so the transport moves every pair concurrently
// and each block crosses one link once. The root's own block is a local copy
// (none in place). The root's port carries N - 1 blocks whatever the
// algorithm; this one pays it with the fewest bytes moved in all, so it is
// the large-block choice.
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildLinearGather(const CollectiveArgs& a, Schedule* out) {
  const size_t block = a.count * a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kGather);
  if (a.rank != a.root) {
    out->add(sendStep(a.root, {kInput, 0, block}, tag));
    return Status::ok();
  }
  for (int k = 1; k < a.nranks; ++k) {
    const int p = (a.root + k) % a.nranks;
    out->add(recvStep(p, {kOutput, p * block, block}, tag));
  }
  out->add(copyStep({kInput, 0, block}, {kOutput, a.root * block, block}));
  return Status::ok();
}

static Status buildLinearScatter(const CollectiveArgs& a, Schedule* out) {
  const size_t block = a.count * a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kScatter);
  if (a.rank != a.root) {
    out->add(recvStep(a.root, {kOutput, 0, block}, tag));
    return Status::ok();
  }
  for (int k = 1; k < a.nranks; ++k) {
    const int p = (a.root + k) % a.nranks;
    out->add(sendStep(p, {kInput, p * block, block}, tag));
  }
  out->add(copyStep({kInput, a.root * block, block}, {kOutput, 0, block}));
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(gather_linear, Collective::kGather, "linear", buildLinearGather);
BRAID_REGISTER_ALGORITHM(scatter_linear, Collective::kScatter, "linear", buildLinearScatter);

}  // namespace braid::algo

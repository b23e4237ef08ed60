// Binomial-tree broadcast from any root, pipelined in chunks: a rank forwards
// chunk c to each of its children as soon as c has landed, so large messages
// stream down the tree while small ones take ceil(log2 N) hops. Children are
// served largest subtree first. Every rank except the root receives each byte
// once, straight into its output; the root sends from its input.
#include "algorithms/binomial/binomial.h"
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildBinomialBroadcast(const CollectiveArgs& a, Schedule* out) {
  const size_t bytes = a.count * a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kBroadcast);
  const BinomialTree tree(a.nranks, a.rank, a.root);
  const std::vector<int> kids = tree.childrenLargestFirst();
  const Chunking chunking(bytes, a.elemSize(), a.chunkBytes);
  if (tree.isRoot()) out->add(copyStep({kInput, 0, bytes}, {kOutput, 0, bytes}));
  for (size_t c = 0; c < chunking.chunks(); ++c) {
    StepId landed = kNoStep;
    if (!tree.isRoot()) landed = out->add(recvStep(tree.parent(), chunking.in(kOutput, c), tag));
    const Region src = chunking.in(tree.isRoot() ? kInput : kOutput, c);
    for (int kid : kids) out->add(sendStep(kid, src, tag), {landed});
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(broadcast_binomial, Collective::kBroadcast, "binomial", buildBinomialBroadcast);

}  // namespace braid::algo

// Binomial-tree gather and scatter from any root: ceil(log2 N) hops instead
// of the linear algorithm's N - 1 messages at the root, for small blocks
// (the tuner ranks it up to kRootedTreeBytes a rank, registry.h).
//
// Gather: a rank collects its subtree's blocks (relative ranks [v, v + size),
// binomial.h) in a scratch in relative order, its own first, then sends them
// to its parent as one message. Scatter runs the same tree the other way: a
// rank receives its subtree's blocks, keeps its own and forwards each child
// its part. The root reads or writes the caller's rank-ordered buffer
// directly, so a subtree that wraps past rank N - 1 crosses the root's link
// as two messages (binomial.h's runs); everywhere else it is one.
#include "algorithms/binomial/binomial.h"
#include "algorithms/registry.h"

namespace braid::algo {
namespace {

using Runs = std::vector<std::pair<int, int>>;

// How the subtree of this (non-root) rank crosses the link to its parent.
Runs runsToParent(const BinomialTree& tree, int root) {
  const int v = tree.relative(), span = tree.subtreeSize(v);
  return tree.parent() == root ? tree.rankOrderedRuns(v, span) : Runs{{v, span}};
}

Status buildBinomialGather(const CollectiveArgs& a, Schedule* out) {
  const size_t block = a.count * a.elemSize();
  if (block == 0) return Status::ok();
  const uint8_t tag = static_cast<uint8_t>(Collective::kGather);
  const BinomialTree tree(a.nranks, a.rank, a.root);
  if (tree.isRoot()) {
    for (int kid : tree.childrenLargestFirst()) {
      const int vk = tree.relativeOf(kid);
      for (auto [first, len] : tree.rankOrderedRuns(vk, tree.subtreeSize(vk)))
        out->add(recvStep(kid, {kOutput, tree.rankOf(first) * block, len * block}, tag));
    }
    out->add(copyStep({kInput, 0, block}, {kOutput, a.root * block, block}));
    return Status::ok();
  }
  const int v = tree.relative(), span = tree.subtreeSize(v);
  int from = kInput;  // a leaf sends its input as it is
  std::vector<StepId> collected;
  if (span > 1) {
    from = out->addScratch(span * block);
    collected.push_back(out->add(copyStep({kInput, 0, block}, {from, 0, block})));
    for (int kid : tree.childrenLargestFirst()) {
      const int vk = tree.relativeOf(kid);
      const size_t at = static_cast<size_t>(vk - v) * block;
      collected.push_back(out->add(recvStep(kid, {from, at, tree.subtreeSize(vk) * block}, tag)));
    }
  }
  for (auto [first, len] : runsToParent(tree, a.root))
    out->add(sendStep(tree.parent(), {from, (first - v) * block, len * block}, tag), collected);
  return Status::ok();
}

Status buildBinomialScatter(const CollectiveArgs& a, Schedule* out) {
  const size_t block = a.count * a.elemSize();
  if (block == 0) return Status::ok();
  const uint8_t tag = static_cast<uint8_t>(Collective::kScatter);
  const BinomialTree tree(a.nranks, a.rank, a.root);
  if (tree.isRoot()) {
    // Largest subtree first: its blocks have the most hops still to go.
    for (int kid : tree.childrenLargestFirst()) {
      const int vk = tree.relativeOf(kid);
      for (auto [first, len] : tree.rankOrderedRuns(vk, tree.subtreeSize(vk)))
        out->add(sendStep(kid, {kInput, tree.rankOf(first) * block, len * block}, tag));
    }
    out->add(copyStep({kInput, a.root * block, block}, {kOutput, 0, block}));
    return Status::ok();
  }
  const int v = tree.relative(), span = tree.subtreeSize(v);
  if (span == 1) {  // a leaf's one block lands in its output
    out->add(recvStep(tree.parent(), {kOutput, 0, block}, tag));
    return Status::ok();
  }
  const int held = out->addScratch(span * block);
  std::vector<StepId> landed;
  for (auto [first, len] : runsToParent(tree, a.root))
    landed.push_back(out->add(recvStep(tree.parent(), {held, (first - v) * block, len * block}, tag)));
  for (int kid : tree.childrenLargestFirst()) {
    const int vk = tree.relativeOf(kid);
    const size_t at = static_cast<size_t>(vk - v) * block;
    out->add(sendStep(kid, {held, at, tree.subtreeSize(vk) * block}, tag), landed);
  }
  out->add(copyStep({held, 0, block}, {kOutput, 0, block}), landed);
  return Status::ok();
}

}  // namespace

BRAID_REGISTER_SMALL_ALGORITHM(gather_binomial, Collective::kGather, "binomial", buildBinomialGather,
                               kRootedTreeBytes);
BRAID_REGISTER_SMALL_ALGORITHM(scatter_binomial, Collective::kScatter, "binomial", buildBinomialScatter,
                               kRootedTreeBytes);

}  // namespace braid::algo

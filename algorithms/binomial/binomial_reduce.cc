// Binomial-tree reduce to any root, pipelined in chunks: a rank combines chunk
// c of its input with its children's partials of c (smallest subtree first,
// since it reports first) and passes the sum up, while later chunks are still
// arriving. Interior ranks keep partial sums in a ring of kSlots chunk-sized
// scratch slots, reused once the send that read a slot has gone (a
// write-after-read dependency), so memory stays bounded for any size; leaves
// send their input as it is; the root reduces straight into its output and,
// for Avg, divides each chunk once when it is complete. Each element is
// combined in one fixed order (the tree's).
#include "algorithms/binomial/binomial.h"
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildBinomialReduce(const CollectiveArgs& a, Schedule* out) {
  constexpr size_t kSlots = 4;
  const size_t es = a.elemSize(), bytes = a.count * es;
  const uint8_t tag = static_cast<uint8_t>(Collective::kReduce);
  const BinomialTree tree(a.nranks, a.rank, a.root);
  std::vector<int> kids = tree.childrenLargestFirst();
  std::reverse(kids.begin(), kids.end());
  const Chunking chunking(bytes, es, a.chunkBytes);
  const size_t chunks = chunking.chunks();
  if (tree.isRoot() && kids.empty()) {  // a single rank (Avg divides by 1: nothing to do)
    out->add(copyStep({kInput, 0, bytes}, {kOutput, 0, bytes}));
    return Status::ok();
  }
  const bool interior = !tree.isRoot() && !kids.empty();
  const size_t slotBytes = chunking.bytes(0);  // the first chunk is the largest
  const int scratch = interior ? out->addScratch(std::min(chunks, kSlots) * slotBytes) : 0;
  std::vector<StepId> sent(chunks, kNoStep);
  for (size_t c = 0; c < chunks; ++c) {
    const Region in = chunking.in(kInput, c);
    Region acc = chunking.in(kOutput, c);
    if (interior) acc = {scratch, (c % kSlots) * slotBytes, in.bytes};
    StepId last = interior && c >= kSlots ? sent[c - kSlots] : kNoStep;  // the slot's previous reader
    for (size_t k = 0; k < kids.size(); ++k)
      last = out->add(recvReduceStep(kids[k], k == 0 ? in : acc, acc, a.dtype, a.op, tag), {last});
    if (tree.isRoot()) {
      if (a.op == RedOp::kAvg) out->add(divideStep(acc, a.dtype, a.nranks), {last});
    } else {
      sent[c] = out->add(sendStep(tree.parent(), kids.empty() ? in : acc, tag), {last});
    }
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(reduce_binomial, Collective::kReduce, "binomial", buildBinomialReduce);

}  // namespace braid::algo

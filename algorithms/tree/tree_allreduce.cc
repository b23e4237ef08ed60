// Double binary tree all-reduce (as NCCL's tree algorithm): the vector is cut
// in two halves, half t reduced up tree t (tree.h) and broadcast back down it,
// both halves at once. Each half is cut into chunks and pipelined: a rank
// forwards chunk c up as soon as its children's partials of c have landed, and
// the root starts chunk c down the tree as soon as it has reduced it, while
// later chunks are still coming up. Latency ~2 log2 N hops per chunk instead of
// the ring's 2(N-1), bandwidth near the ring's for large messages, any N.
//
// Buffers: partial sums are built in place in the output (out = in op child0
// op child1), sent up from there, and overwritten by the result coming down,
// so no scratch is needed; a leaf sends straight from its input. The root
// divides once for Avg before broadcasting. Each element is combined in one
// fixed order (the tree's) and every rank receives the root's bytes, so
// results are bit-identical everywhere.
//
// Message order: a pair of ranks can exchange messages of both trees on one
// channel (a parent in one tree may be a child in the other). Steps are
// emitted in the order of an ideal pipelined execution, by the time slot
//   up, rank at depth d:   c + D - d        down, rank at depth d:  c + D + d + 1
// (D the tree's depth), which both ends of a message compute identically from
// the sender's depth, so sends and receives on every channel appear in the same
// order, and a chunk of one tree never queues behind a much later chunk of the
// other. Every dependency points to an earlier slot.
#include <algorithm>
#include <tuple>

#include "algorithms/registry.h"
#include "algorithms/tree/tree.h"

namespace braid::algo {
namespace {

enum EventKind : int { kUpRecv, kUpSend, kDivide, kDownRecv, kDownSend };

struct Event {
  int slot, tree;
  size_t chunk;
  int kind, child;  // child: index into the children for kUpRecv / kDownSend
  bool operator<(const Event& o) const {
    return std::tie(slot, tree, chunk, kind, child) < std::tie(o.slot, o.tree, o.chunk, o.kind, o.child);
  }
};

Status buildTreeAllReduce(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t es = a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllReduce);
  if (n == 1) {
    out->add(copyStep({kInput, 0, a.count * es}, {kOutput, 0, a.count * es}));
    return Status::ok();
  }
  const DoubleBinaryTree trees(n);
  const size_t chunkElems = std::max<size_t>(1, a.chunkBytes / es);
  size_t halfBegin[2], halfSize[2], chunks[2];
  std::vector<int> kids[2];
  std::vector<Event> events;
  for (int t = 0; t < 2; ++t) {
    halfBegin[t] = partBegin(a.count, 2, t);
    halfSize[t] = partSize(a.count, 2, t);
    chunks[t] = std::max<size_t>(1, (halfSize[t] + chunkElems - 1) / chunkElems);
    kids[t] = trees.children(t, r);
    const int d = trees.depth(t, r), D = trees.maxDepth(t);
    const bool root = trees.parent(t, r) < 0;
    for (size_t c = 0; c < chunks[t]; ++c) {
      const int base = static_cast<int>(c) + D;
      for (int k = 0; k < static_cast<int>(kids[t].size()); ++k) {
        events.push_back({base - d - 1, t, c, kUpRecv, k});
        events.push_back({base + d + 1, t, c, kDownSend, k});
      }
      if (root) {
        if (a.op == RedOp::kAvg) events.push_back({base, t, c, kDivide, 0});
      } else {
        events.push_back({base - d, t, c, kUpSend, 0});
        events.push_back({base + d, t, c, kDownRecv, 0});
      }
    }
  }
  std::sort(events.begin(), events.end());

  // Per tree and chunk: the step that last wrote out[chunk], and the send up
  // that read it (the result coming down must not overwrite it before).
  std::vector<StepId> written[2], sentUp[2];
  for (int t = 0; t < 2; ++t) {
    written[t].assign(chunks[t], kNoStep);
    sentUp[t].assign(chunks[t], kNoStep);
  }
  for (const Event& e : events) {
    const int t = e.tree;
    const size_t c = e.chunk;
    const size_t begin = halfBegin[t] + partBegin(halfSize[t], chunks[t], c);
    const size_t bytes = partSize(halfSize[t], chunks[t], c) * es;
    const Region in{kInput, begin * es, bytes}, result{kOutput, begin * es, bytes};
    StepId& w = written[t][c];
    switch (e.kind) {
      case kUpRecv:  // the first child's partial meets the input, the next one the sum so far
        w = out->add(recvReduceStep(kids[t][e.child], e.child == 0 ? in : result, result, a.dtype, a.op, tag), {w});
        break;
      case kUpSend:  // a leaf sends its input as it is
        sentUp[t][c] = out->add(sendStep(trees.parent(t, r), kids[t].empty() ? in : result, tag), {w});
        break;
      case kDivide:
        w = out->add(divideStep(result, a.dtype, n), {w});
        break;
      case kDownRecv:
        w = out->add(recvStep(trees.parent(t, r), result, tag), {sentUp[t][c]});
        break;
      case kDownSend:
        out->add(sendStep(kids[t][e.child], result, tag), {w});
        break;
    }
  }
  return Status::ok();
}

}  // namespace

BRAID_REGISTER_ALGORITHM(allreduce_tree, Collective::kAllReduce, "tree", buildTreeAllReduce);

}  // namespace braid::algo

// Ring all-gather: at step k rank r forwards block (r-k) to its right neighbour
// and receives block (r-k-1) from its left, chunked so that forwarding a chunk
// starts as soon as it has landed. Blocks are received straight into the
// output; the own block is copied (or already in place).
#include "algorithms/registry.h"
#include "algorithms/ring/ring.h"

namespace braid::algo {

static Status buildRingAllGather(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t es = a.elemSize(), blockBytes = a.count * es;
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllGather);
  out->add(copyStep({kInput, 0, blockBytes}, {kOutput, r * blockBytes, blockBytes}));
  if (n == 1) return Status::ok();

  RingLayout layout(a.count * n, n, es, a.chunkBytes);
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  const size_t chunks = layout.chunks();
  std::vector<StepId> landed(chunks, kNoStep);  // recv of the block sent next step
  for (int k = 0; k < n - 1; ++k) {
    const int sendBlock = mod(r - k, n), recvBlock = mod(r - k - 1, n);
    for (size_t c = 0; c < chunks; ++c) {
      Region src = layout.region(kOutput, sendBlock, c);
      if (k == 0) src = {kInput, src.offset - r * blockBytes, src.bytes};  // own block, from input
      out->add(sendStep(right, src, tag), {landed[c]});
    }
    for (size_t c = 0; c < chunks; ++c)
      landed[c] = out->add(recvStep(left, layout.region(kOutput, recvBlock, c), tag));
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(allgather_ring, Collective::kAllGather, "ring", buildRingAllGather);

}  // namespace braid::algo

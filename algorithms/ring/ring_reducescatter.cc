// Ring reduce-scatter: at step k rank r sends its partial sum of block (r-k-1)
// to the right and receives the left's partial of block (r-k-2), reducing it
// with its own input. After N-1 steps the block that arrives is block r, fully
// reduced, and lands in the output. Partial sums in between live in two
// scratch blocks used alternately (step k writes one, step k+1 sends it while
// step k+1 fills the other).
#include "algorithms/registry.h"
#include "algorithms/ring/ring.h"

namespace braid::algo {

static Status buildRingReduceScatter(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t es = a.elemSize(), blockBytes = a.count * es;
  const uint8_t tag = static_cast<uint8_t>(Collective::kReduceScatter);
  if (n == 1) {
    out->add(copyStep({kInput, 0, blockBytes}, {kOutput, 0, blockBytes}));
    return Status::ok();
  }
  RingLayout layout(a.count * n, n, es, a.chunkBytes);  // block b = segment b
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  const size_t chunks = layout.chunks();
  const int scratch = n > 2 ? out->addScratch(2 * blockBytes) : 0;

  // Where step k's partial sum goes, as a region of chunk c of block `block`.
  auto partial = [&](int k, int block, size_t c) -> Region {
    Region inBlock = layout.region(kInput, block, c);
    size_t inChunk = inBlock.offset - block * blockBytes;  // offset inside the block
    if (k == n - 2) return {kOutput, inChunk, inBlock.bytes};
    return {scratch, (k % 2) * blockBytes + inChunk, inBlock.bytes};
  };

  std::vector<StepId> produced(chunks, kNoStep);      // partial sums of the previous step
  std::vector<std::vector<StepId>> sentFrom(2, std::vector<StepId>(chunks, kNoStep));
  for (int k = 0; k < n - 1; ++k) {
    const int sendBlock = mod(r - k - 1, n), recvBlock = mod(r - k - 2, n);
    for (size_t c = 0; c < chunks; ++c) {
      Region src = k == 0 ? layout.region(kInput, sendBlock, c) : partial(k - 1, sendBlock, c);
      StepId s = out->add(sendStep(right, src, tag), {produced[c]});
      if (k > 0) sentFrom[(k - 1) % 2][c] = s;
    }
    for (size_t c = 0; c < chunks; ++c) {
      // The scratch half written now was last read by the send of step k-1.
      StepId war = k >= 2 ? sentFrom[k % 2][c] : kNoStep;
      produced[c] = out->add(recvReduceStep(left, layout.region(kInput, recvBlock, c),
                                            partial(k, recvBlock, c), a.dtype, a.op, tag),
                             {war});
    }
  }
  if (a.op == RedOp::kAvg)
    for (size_t c = 0; c < chunks; ++c)
      out->add(divideStep(partial(n - 2, r, c), a.dtype, n), {produced[c]});
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(reducescatter_ring, Collective::kReduceScatter, "ring",
                         buildRingReduceScatter);

}  // namespace braid::algo

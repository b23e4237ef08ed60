// Pipelined chain broadcast: root -> root+1 -> ... -> root-1, in chunks, each
// rank forwarding chunk c as soon as it has landed. Time ~ (N-1+C) chunk
// steps for C chunks: near the link rate for large messages.
#include "algorithms/chain/chain.h"
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildChainBroadcast(const CollectiveArgs& a, Schedule* out) {
  const size_t bytes = a.count * a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kBroadcast);
  ChainPosition pos(a.nranks, a.rank, a.root, /*rootFirst=*/true);
  const size_t chunks = chainChunks(bytes, a.elemSize(), a.chunkBytes);
  if (pos.isRoot()) out->add(copyStep({kInput, 0, bytes}, {kOutput, 0, bytes}));
  for (size_t c = 0; c < chunks; ++c) {
    Region chunk = chainChunk(bytes, a.elemSize(), chunks, c);
    StepId landed = kNoStep;
    if (!pos.isRoot()) landed = out->add(recvStep(pos.prev(), {kOutput, chunk.offset, chunk.bytes}, tag));
    if (pos.hasNext()) {
      Region src = pos.isRoot() ? Region{kInput, chunk.offset, chunk.bytes}
                                : Region{kOutput, chunk.offset, chunk.bytes};
      out->add(sendStep(pos.next(), src, tag), {landed});
    }
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(broadcast_chain, Collective::kBroadcast, "chain", buildChainBroadcast);

}  // namespace braid::algo

// Pipelined chain reduce: root+1 -> root+2 -> ... -> root, each rank adding its
// input to the partial sum passing by, chunk by chunk. Intermediate ranks keep
// partial sums in a small ring of scratch slots (kSlots chunks, reused once the
// send that read a slot is done), so memory stays bounded for any size; the
// root reduces straight into its output.
#include "algorithms/chain/chain.h"
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildChainReduce(const CollectiveArgs& a, Schedule* out) {
  constexpr size_t kSlots = 4;
  const size_t es = a.elemSize(), bytes = a.count * es;
  const uint8_t tag = static_cast<uint8_t>(Collective::kReduce);
  ChainPosition pos(a.nranks, a.rank, a.root, /*rootFirst=*/false);
  if (a.nranks == 1) {
    out->add(copyStep({kInput, 0, bytes}, {kOutput, 0, bytes}));
    if (a.op == RedOp::kAvg) out->add(divideStep({kOutput, 0, bytes}, a.dtype, 1));
    return Status::ok();
  }
  const size_t chunks = chainChunks(bytes, es, a.chunkBytes);
  const size_t slotBytes = chainChunk(bytes, es, chunks, 0).bytes;  // the first chunk is the largest
  const bool middle = !pos.isFirst() && !pos.isRoot();
  const int scratch = middle ? out->addScratch(std::min(chunks, kSlots) * slotBytes) : 0;
  std::vector<StepId> sends(chunks, kNoStep);

  for (size_t c = 0; c < chunks; ++c) {
    Region chunk = chainChunk(bytes, es, chunks, c);
    Region in{kInput, chunk.offset, chunk.bytes};
    if (pos.isFirst()) {
      sends[c] = out->add(sendStep(pos.next(), in, tag));
    } else if (pos.isRoot()) {
      Region dst{kOutput, chunk.offset, chunk.bytes};
      StepId s = out->add(recvReduceStep(pos.prev(), in, dst, a.dtype, a.op, tag));
      if (a.op == RedOp::kAvg) out->add(divideStep(dst, a.dtype, a.nranks), {s});
    } else {
      Region slot{scratch, (c % kSlots) * slotBytes, chunk.bytes};
      StepId war = c >= kSlots ? sends[c - kSlots] : kNoStep;
      StepId s = out->add(recvReduceStep(pos.prev(), in, slot, a.dtype, a.op, tag), {war});
      sends[c] = out->add(sendStep(pos.next(), slot, tag), {s});
    }
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(reduce_chain, Collective::kReduce, "chain", buildChainReduce);

}  // namespace braid::algo

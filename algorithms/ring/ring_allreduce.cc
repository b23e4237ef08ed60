// Ring all-reduce: a pipelined ring reduce-scatter followed by a ring
// all-gather, each segment cut into chunks so that receiving, reducing and
// forwarding overlap. Bandwidth-optimal (2(N-1)/N of the data crosses each
// link); latency grows with N, which is why other algorithms exist.
//
// Rank r, segment s_k = (r - k) mod N:
//   reduce-scatter step k (0..N-2): send out[s_k] (in[s_0] at k=0), receive
//     s_{k+1} from the left and reduce it with the local input into out.
//   after N-1 steps r owns the fully reduced segment (r+1) mod N.
//   all-gather step k: send segment (r+1-k), receive (r-k) straight into out.
// Out of place, the input is read, never written, and no extra copy is made:
// the first reduction of each segment reads in[] and writes out[].
#include "algorithms/registry.h"
#include "algorithms/ring/ring.h"

namespace braid::algo {

static Status buildRingAllReduce(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t es = a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllReduce);
  if (n == 1) {
    out->add(copyStep({kInput, 0, a.count * es}, {kOutput, 0, a.count * es}));
    return Status::ok();
  }
  RingLayout layout(a.count, n, es, a.chunkBytes);
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  const size_t chunks = layout.chunks();

  // last[seg][c]: the step that last wrote out[seg] chunk c (what a send waits for).
  std::vector<std::vector<StepId>> last(n, std::vector<StepId>(chunks, kNoStep));
  // lastRead[seg][c]: the send that last read segment seg chunk c (of in[] at
  // step 0, which in place is the same memory as out[]). The all-gather must not
  // overwrite those bytes before that send has left: data dependencies already
  // imply it, the explicit edge keeps it true for any transport.
  std::vector<std::vector<StepId>> lastRead(n, std::vector<StepId>(chunks, kNoStep));

  for (int k = 0; k < n - 1; ++k) {
    const int sendSeg = mod(r - k, n), recvSeg = mod(r - k - 1, n);
    for (size_t c = 0; c < chunks; ++c) {
      Region src = layout.region(k == 0 ? kInput : kOutput, sendSeg, c);
      lastRead[sendSeg][c] = out->add(sendStep(right, src, tag), {last[sendSeg][c]});
    }
    for (size_t c = 0; c < chunks; ++c) {
      StepId s = out->add(recvReduceStep(left, layout.region(kInput, recvSeg, c),
                                         layout.region(kOutput, recvSeg, c), a.dtype, a.op, tag));
      last[recvSeg][c] = s;
    }
  }
  const int owned = mod(r + 1, n);
  if (a.op == RedOp::kAvg) {
    for (size_t c = 0; c < chunks; ++c) {
      StepId s = out->add(divideStep(layout.region(kOutput, owned, c), a.dtype, n), {last[owned][c]});
      if (s != kNoStep) last[owned][c] = s;
    }
  }
  for (int k = 0; k < n - 1; ++k) {
    const int sendSeg = mod(r + 1 - k, n), recvSeg = mod(r - k, n);
    for (size_t c = 0; c < chunks; ++c)
      out->add(sendStep(right, layout.region(kOutput, sendSeg, c), tag), {last[sendSeg][c]});
    for (size_t c = 0; c < chunks; ++c)
      last[recvSeg][c] = out->add(recvStep(left, layout.region(kOutput, recvSeg, c), tag),
                                  {lastRead[recvSeg][c]});
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(allreduce_ring, Collective::kAllReduce, "ring", buildRingAllReduce);

}  // namespace braid::algo

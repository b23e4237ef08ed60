// Recursive doubling all-reduce: log2(N) rounds, in each of which a rank
// swaps its whole vector with the partner whose rank differs in one bit and
// reduces. Latency-optimal (one message per round, no pipeline to fill), so it
// is the small-message algorithm; the ring wins once bandwidth dominates.
//
// Any N: with p the largest power of two <= N and e = N - p, the first 2e ranks
// pair up before the rounds: each even one hands its vector to the odd one
// next to it and waits, the odd one folds it in and takes part in the rounds as
// rank r/2, and hands the result back at the end (as Open MPI and MPICH do).
//
// Every rank reduces in the same association (a op b == b op a exactly for
// IEEE), so all ranks end with bit-identical results.
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildRecursiveDoublingAllReduce(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t bytes = a.count * a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllReduce);
  const Region in{kInput, 0, bytes}, result{kOutput, 0, bytes};
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;

  if (r < 2 * extra && r % 2 == 0) {  // folded away: hand over, wait for the result
    StepId sent = out->add(sendStep(r + 1, in, tag));
    out->add(recvStep(r + 1, result, tag), {sent});  // in place, result overwrites in
    return Status::ok();
  }
  StepId last = out->add(copyStep(in, result));
  const int scratch = n > 1 ? out->addScratch(bytes) : 0;
  const Region incoming{scratch, 0, bytes};
  auto reduceStep = [&]() {
    Step s;
    s.kind = StepKind::kReduce;
    s.src = incoming;
    s.dst = result;
    s.dtype = a.dtype;
    s.op = a.op;
    return s;
  };
  if (r < 2 * extra) {  // odd: fold in the even neighbour's vector
    StepId got = out->add(recvStep(r - 1, incoming, tag));
    last = out->add(reduceStep(), {got, last});
  }
  const int vrank = r < 2 * extra ? r / 2 : r - extra;
  auto realRank = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };
  for (int mask = 1; mask < p; mask <<= 1) {
    const int peer = realRank(vrank ^ mask);
    StepId sent = out->add(sendStep(peer, result, tag), {last});
    StepId got = out->add(recvStep(peer, incoming, tag), {last});
    last = out->add(reduceStep(), {sent, got});
  }
  if (a.op == RedOp::kAvg) last = out->add(divideStep(result, a.dtype, n), {last});
  if (r < 2 * extra) out->add(sendStep(r - 1, result, tag), {last});
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(allreduce_rd, Collective::kAllReduce, "rd", buildRecursiveDoublingAllReduce);

}  // namespace braid::algo

// Closed-form predictions of the alpha-beta-gamma cost model, one per
// algorithm whose schedule shape is known, for rank counts the discrete-event
// model (algorithms/sim/cost_model.h) cannot afford (16,384 ranks). Each
// formula is what the discrete-event model computes for that schedule, under
// the same rules (a message holds its sender's egress and its receiver's
// ingress port for alpha + bytes * beta; reductions hold the rank's executor
// for gamma * bytes); tests/unit/tuner checks the two agree at N = 64..1024.
//
// Notation: N ranks, n bytes (as in ModelQuery), t(x) = alpha + x beta of the
// link the step uses, g = gamma, C chunks of c bytes per pipelined piece,
// p the largest power of two <= N, e = N - p, R = log2 p.
//
//   allreduce ring    (N-1) max(C t(c), C g c, t(c) + g c)   reduce-scatter
//                     + (N-1) max(C t(c), t(c))              all-gather
//                     c = ceil(n/N)/C: with C = 1, 2(N-1) t(n/N) + (N-1) g n/N
//                     (the C t(c) port terms use the slowest link, scaled by
//                     the share of non-empty segments when n < N elements; the
//                     lone t(c) chain terms the mean hop around the ring)
//   allreduce rd      g n + R (t(n) + g n)  [+ max(t(n), g n) + t(n) if e > 0]
//   allreduce rhd     sum over i = 1..R of max(C_i t(c_i) + g c_i, t(c_i) + C_i g c_i)
//                     + sum over i of C_i t(c_i), halves n/2^i in C_i chunks
//                     [+ fold and unfold of n in chunks if e > 0]
//   reducescatter ring (N-1) max(C t(c), C g c, t(c) + g c), c = n/C
//   allgather ring    max((N-1) C t(c), g n), c = n/C
//   broadcast chain   (N - 2 + C) t(c)  [sum over the N-1 hops + (C-1) t_slowest(c)]
//   reduce chain      (N-1)(t(c) + g c) + (C-1) max(t(c), g c)
//   alltoall pairwise max((N-1) t(n), g n)
//   barrier dissemination ceil(log2 N) alpha
//
// Rounds of rd / rhd whose partner is on the same host for every rank (2 * mask
// divides ranksPerHost) use the intra-host link; every other step uses the
// inter-host link as soon as the ranks span more than one host.
#pragma once

#include <cstddef>

#include "algorithms/collective.h"
#include "algorithms/sim/cost_model.h"

namespace braid::algo {

struct ModelQuery {
  Collective collective = Collective::kAllReduce;
  int nranks = 1;
  size_t bytes = 0;  // the vector (allreduce, broadcast, reduce), per rank (allgather,
                     // reducescatter) or per peer (alltoall), as buildCollective counts it
  size_t elemSize = 4;
  size_t chunkBytes = 128 * 1024;
};

// True and *seconds set when `algorithm` has a closed form for q.collective;
// *usesChunks tells whether the result depends on q.chunkBytes.
bool closedFormTime(const char* algorithm, const ModelQuery& q, const CostParams& p, double* seconds,
                    bool* usesChunks);

}  // namespace braid::algo

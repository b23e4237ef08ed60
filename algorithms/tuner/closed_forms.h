// Closed-form predictions of the alpha-beta-gamma cost model, one per
// algorithm whose schedule shape is known, for rank counts the discrete-event
// model (algorithms/sim/cost_model.h) cannot afford (16,384 ranks). Each
// formula is what the discrete-event model computes for that schedule, under
// the same rules (a message holds its sender's egress and its receiver's
// ingress port for alpha + bytes * beta; reductions hold the rank's executor
// for gamma * bytes); tests/unit/tuner checks the two agree at N = 64..1024,
// and where they cannot quite (pipelines whose ports and executor interleave
// in ways no sum follows), it names the gap and holds it to a measured bound.
//
// Notation: N ranks, n bytes (as in ModelQuery), t(x) = alpha + x beta of the
// link the step uses (t_i within a host, t_e across), g = gamma, C chunks of
// c bytes per pipelined piece, p the largest power of two <= N, e = N - p,
// R = log2 p, h = ranksPerHost, H = ceil(N / h) hosts, L = ceil(log2 N).
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
//                     (as the builder cuts them: an empty half, with fewer
//                     elements than 2^i, is not sent)
//                     [+ fold and unfold of n in chunks if e > 0]
//   allreduce tree    T1 + max((C-1) S, C g c + (C-1) 2 g c), each tree carrying
//                     n/2 in C chunks. T1 = one chunk up and down both trees:
//                     up, a rank reduces its lower child's partial, then
//                     receives and reduces the other's, 2 (t(c) + g c) a level;
//                     down, it serves its children in rank order, 2 t(c) a
//                     level; a power of two gives (2L-1)(t(c) + g c) + (2L-1) t(c).
//                     S = a slot's messages (a chunk of each tree) served
//                     greedily, each done within its two ports' loads:
//                     4 t(c) + 4 t(c) - t(c) = 7 t(c) on one host, not the
//                     4 t(c) of the busiest port. The executor folds two
//                     partials a slot, after the first child's C chunks,
//                     which the ranks above the leaves get all at once.
//   allreduce hierarchical  max(g c + (h-1)(t_i(c) + g c), 2 g c + (h-1) C t_i(c), h g n)
//                     fold into the host's leader, + rd (n <= 64 KiB) or ring
//                     over the H leaders, every hop across hosts, + (h-1) C t_i(c)
//                     from the leader back to its host (h: the busiest host's ranks)
//   broadcast binomial T1 + (C-1) max(Le t_e(c), Li t_i(c)): the root's
//                     L children, Li = ceil(log2 min(h, N)) of them in its host,
//                     Le = L - Li across, its two ports pacing the pipeline;
//                     T1 = Le t_e(c) + Li t_i(c) when the last host is full;
//                     at least g n, the root's copy
//   reduce binomial   T1 + (C-1) max(Le t_e(c), Li t_i(c), L g c), T1 = one
//                     chunk's chain through the root's children, smallest
//                     first: Le (t_e(c) + g c) + Li (t_i(c) + g c) when each
//                     child's partial is ready in time
//   reducescatter ring (N-1) max(C t(c), C g c, t(c) + g c), c = n/C
//   reducescatter rh  sum over rounds of max(C t(c) + g c, t(c) + C g c) over
//                     the half kept, m = p/2^i groups (the first e hold two
//                     blocks) [+ the fold of N n first and the block handed
//                     back if e > 0] + g n for the copy out
//   allgather ring    max((N-1) C t(c), g n), c = n/C
//   allgather rd      max(g n, t(n)) + sum over d = 2, 4 .. < N of t(d n); other
//                     N: Bruck rounds of k = min(d, N-d) blocks, + alpha where
//                     a rank's range wraps past block N-1 (two messages)
//   broadcast chain   (N - 2 + C) t(c)  [sum over the N-1 hops + (C-1) t_slowest(c)]
//   reduce chain      (N-1)(t(c) + g c) + (C-1) max(t(c), g c)
//   alltoall pairwise max(X t_e(n), (h-1) t_i(n), g n), X = N - h crossings
//                     a port (h (N - h) with a shared NIC); (N-1) t(n) on one host
//   alltoall bruck    g n + sum over d = 1, 2 .. < N of (2 g k_d n + t(k_d n)),
//                     k_d = the indices 1..N-1 with bit d set (pack, send, unpack)
//   barrier dissemination ceil(log2 N) rounds of alpha, walked rank by rank
//                     (with a shared NIC a host's crossings take turns)
//
// Rounds of rd / rhd whose partner is on the same host for every rank (after
// the fold, when N is not a power of two) use the intra-host link; every
// other step uses the inter-host link as soon as the ranks span more than
// one host. With a shared NIC (CostParams::sharedNic) a round's crossings of
// one host queue on its port: rd, rhd and rh charge the busiest host's
// queue; rd hides a queued round's reduction behind the next round's queue;
// the walks keep per-port clocks (closed_form_parts.h, PortClock). Where the link
// differs rank by rank and the ranks then drift apart (the trees, rh, rd
// all-gather, Bruck), the form walks the N ranks once per round or once down
// (or up) the tree, each rank starting when it and its partners or parent
// are done (O(N log N) arithmetic, no events): the same sums, taken per rank,
// so uneven hosts and a partly filled last host come out right too.
#pragma once

#include <cstddef>

#include "algorithms/collective.h"
#include "algorithms/sim/cost_model.h"

namespace braid::algo {

struct ModelQuery {
  Collective collective = Collective::kAllReduce;
  int nranks = 1;
  size_t bytes = 0;  // the vector (allreduce, broadcast, reduce), per rank (allgather,
                     // reducescatter, gather, scatter) or per peer (alltoall), as
                     // buildCollective counts it
  size_t elemSize = 4;
  size_t chunkBytes = 128 * 1024;
};

// True and *seconds set when `algorithm` has a closed form for q.collective;
// *usesChunks tells whether the result depends on q.chunkBytes.
bool closedFormTime(const char* algorithm, const ModelQuery& q, const CostParams& p, double* seconds,
                    bool* usesChunks);

}  // namespace braid::algo

// Internal to the closed forms (closed_forms.h): the helpers they share and
// each form's entry, one per algorithm, so that the forms can live in a few
// files of one kind each (closed_forms.cc: ring, doubling, chain and pairwise;
// closed_forms_trees.cc: trees and the hierarchy; closed_forms_rounds.cc:
// log-round all-gather, reduce-scatter and all-to-all).
#pragma once

#include <algorithm>
#include <cmath>

#include "algorithms/tuner/closed_forms.h"

namespace braid::algo::forms {

// Pieces of `elems` elements when cut at `chunkBytes` (as RingLayout and
// chainChunks cut them), at least one.
inline double pieces(double elems, const ModelQuery& q) {
  const double chunkElems = std::max<double>(1, static_cast<double>(q.chunkBytes / q.elemSize));
  return std::max(1.0, std::ceil(elems / chunkElems));
}

inline int log2Floor(int n) {
  int r = 0;
  while ((2 << r) <= n) ++r;
  return r;
}

// The link of a halving/doubling round whose partner differs in bit `mask`.
inline const LinkCost& roundLink(const CostParams& p, int nranks, int mask) {
  if (p.hosts(nranks) == 1 || p.ranksPerHost % (2 * mask) == 0) return p.intra;
  return p.inter;
}

// How many messages of such a round share a port: with a shared NIC, the
// ranks of the first host whose partner is on another host (hosts in blocks
// of ranksPerHost); else one.
inline int roundSharers(const CostParams& p, int nranks, int mask) {
  if (!p.sharedNic || &roundLink(p, nranks, mask) == &p.intra) return 1;
  int k = 0;
  for (int r = 0; r < std::min(p.ranksPerHost, nranks); ++r) k += (r ^ mask) / p.ranksPerHost != 0;
  return std::max(1, k);
}

using Form = double (*)(const ModelQuery&, const CostParams&);

// closed_forms.cc
double ringAllReduce(const ModelQuery& q, const CostParams& p);
double rdAllReduce(const ModelQuery& q, const CostParams& p);

// closed_forms_trees.cc
double treeAllReduce(const ModelQuery& q, const CostParams& p);
double hierarchicalAllReduce(const ModelQuery& q, const CostParams& p);
double binomialBroadcast(const ModelQuery& q, const CostParams& p);
double binomialReduce(const ModelQuery& q, const CostParams& p);

// closed_forms_rounds.cc
double rdAllGather(const ModelQuery& q, const CostParams& p);
double rhReduceScatter(const ModelQuery& q, const CostParams& p);
double bruckAllToAll(const ModelQuery& q, const CostParams& p);

}  // namespace braid::algo::forms

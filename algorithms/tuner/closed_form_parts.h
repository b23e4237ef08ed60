// Internal to the closed forms (closed_forms.h): the helpers they share and
// each form's entry, one per algorithm, so that the forms can live in a few
// files of one kind each (closed_forms.cc: ring, doubling, chain and pairwise;
// closed_forms_trees.cc: trees and the hierarchy; closed_forms_rounds.cc:
// log-round all-gather, reduce-scatter and all-to-all).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

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

// The rank that virtual rank v of a folded halving/doubling schedule stands
// for, when N = P + e is not a power of two: the first e are the odd ranks
// 2v+1 (their even neighbours folded in), the rest v + e.
inline int foldedRank(int v, int e) { return v < e ? 2 * v + 1 : v + e; }

// A halving/doubling round over the P = 2^R virtual ranks of N, partners
// differing in bit `mask`. When N is not a power of two the first e = N - P
// virtual ranks stand for the odd ranks 2v+1 (their even neighbours folded
// in), the rest for v + e, so a round can cross hosts where a power of two
// would not. link: the inter-host link if any pair crosses. sharers: with a
// shared NIC, the most crossing messages of any one host, which queue on its
// port (at least one); else one.
struct Round {
  const LinkCost* link;
  int sharers;
};
inline Round foldedRound(const CostParams& p, int nranks, int mask) {
  const int pw = 1 << log2Floor(nranks), e = nranks - pw;
  auto real = [&](int v) { return foldedRank(v, e); };
  std::vector<int> crossing(p.hosts(nranks), 0);
  bool any = false;
  for (int v = 0; v < pw; ++v) {
    const int a = real(v), b = real(v ^ mask);
    if (p.sameHost(a, b)) continue;
    any = true;
    crossing[a / p.ranksPerHost]++;
  }
  if (!any) return {&p.intra, 1};
  const int most = *std::max_element(crossing.begin(), crossing.end());
  return {&p.inter, p.sharedNic ? std::max(1, most) : 1};
}

// The ports of a rank-by-rank walk, as the cost model keeps them: each rank
// has one port per direction for its host and one for the network, except
// that with a shared NIC the network ports are its host's, so the messages
// across hosts of all its ranks take turns. A walk posts each message once
// it is ready; it starts when both its ports are free and holds them until
// it ends. Walks post in rank order within a round: where ranks of a host are
// ready together (they are, round by round) that is the model's order too.
class PortClock {
 public:
  PortClock(const CostParams& p, int nranks)
      : p_(p), egressFree_(2 * static_cast<size_t>(nranks), 0), ingressFree_(egressFree_) {}
  // When a message from `from` to `to`, ready at `ready` and holding both
  // ports for `seconds`, ends.
  double send(int from, int to, double ready, double seconds) {
    const bool local = p_.sameHost(from, to);
    double& out = egressFree_[port(from, local)];
    double& in = ingressFree_[port(to, local)];
    out = in = std::max({ready, out, in}) + seconds;
    return out;
  }

 private:
  size_t port(int rank, bool local) const {
    if (local) return 2 * static_cast<size_t>(rank);
    const int owner = p_.sharedNic ? rank / p_.ranksPerHost * p_.ranksPerHost : rank;
    return 2 * static_cast<size_t>(owner) + 1;
  }
  const CostParams& p_;
  std::vector<double> egressFree_, ingressFree_;
};

using Form = double (*)(const ModelQuery&, const CostParams&);

// closed_forms.cc
double ringAllReduce(const ModelQuery& q, const CostParams& p);
double rdAllReduce(const ModelQuery& q, const CostParams& p);

// closed_forms_trees.cc
double treeAllReduce(const ModelQuery& q, const CostParams& p);
double hierarchicalAllReduce(const ModelQuery& q, const CostParams& p);
double hierarchicalAllGather(const ModelQuery& q, const CostParams& p);
double binomialBroadcast(const ModelQuery& q, const CostParams& p);
double binomialReduce(const ModelQuery& q, const CostParams& p);

// closed_forms_rounds.cc
double rdAllGather(const ModelQuery& q, const CostParams& p);
double rhReduceScatter(const ModelQuery& q, const CostParams& p);
double bruckAllToAll(const ModelQuery& q, const CostParams& p);

}  // namespace braid::algo::forms

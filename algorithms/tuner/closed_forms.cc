#include "algorithms/tuner/closed_forms.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "algorithms/tuner/closed_form_parts.h"

namespace braid::algo::forms {
namespace {

// Ranks in a line or ring, blocks of ranksPerHost per host: H hosts give
// H - 1 (line) or H (ring) hops across hosts, the rest within a host.
double lineHops(const CostParams& p, int n, double c) {
  const int h = p.hosts(n);
  return (n - h) * p.intra.time(c) + (h - 1) * p.inter.time(c);
}
double ringHop(const CostParams& p, int n, double c) {
  const int h = p.hosts(n);
  if (h == 1) return p.intra.time(c);
  return ((n - h) * p.intra.time(c) + h * p.inter.time(c)) / n;
}

// One ring step whose C chunks of c bytes each arrive and are reduced: bound
// by the slowest port (a fraction `busy` of steps carry data there), by the
// executor, or by one chunk's latency chain (slow hops amortised around the ring).
double reduceStep(const ModelQuery& q, const CostParams& p, double C, double c, double busy) {
  const double g = p.gamma;
  return std::max({busy * C * p.widest(q.nranks).time(c), C * g * c, ringHop(p, q.nranks, c) + g * c});
}
double forwardStep(const ModelQuery& q, const CostParams& p, double C, double c, double busy) {
  return std::max(busy * C * p.widest(q.nranks).time(c), ringHop(p, q.nranks, c));
}

}  // namespace

double ringAllReduce(const ModelQuery& q, const CostParams& p) {
  const double es = q.elemSize, count = std::floor(q.bytes / es), n = q.nranks;
  if (q.nranks == 1) return p.gamma * q.bytes;
  // Fewer elements than ranks leave segments empty (and their messages out).
  const double seg = std::ceil(count / n), C = pieces(seg, q), c = seg * es / C;
  const double busy = std::min(1.0, count / n);
  return (n - 1) * (reduceStep(q, p, C, c, busy) + forwardStep(q, p, C, c, busy));
}

double rdAllReduce(const ModelQuery& q, const CostParams& p) {
  const double bytes = q.bytes, g = p.gamma;
  const int pw = 1 << log2Floor(q.nranks), extra = q.nranks - pw;
  double t = g * bytes;  // the copy into the output
  if (extra > 0) t = std::max(p.widest(2).time(bytes), t) + g * bytes;
  // A round whose messages queue on a shared port: the ranks served first
  // reduce while the port serves the rest, so the reduction of a queued
  // round hides behind the next round's queue (up to its length); the ranks
  // served last set the pace.
  double hideable = 0;
  for (int mask = 1; mask < pw; mask <<= 1) {
    const Round round = foldedRound(p, q.nranks, mask);
    const double msg = round.link->time(bytes), queued = round.sharers * msg;
    t += queued + g * bytes - std::min(hideable, queued - msg);
    hideable = round.sharers > 1 ? g * bytes : 0;
  }
  if (extra > 0) t += p.widest(2).time(bytes);
  return t;
}

namespace {

double rhdAllReduce(const ModelQuery& q, const CostParams& p) {
  const double es = q.elemSize, count = std::floor(q.bytes / es), g = p.gamma;
  if (q.nranks == 1) return g * q.bytes;
  const int pw = 1 << log2Floor(q.nranks), extra = q.nranks - pw;
  double t = 0;
  const LinkCost& fold = p.widest(2);
  const double C0 = pieces(count, q), c0 = count * es / C0;
  if (extra > 0) {
    t += std::max(C0 * fold.time(c0) + g * c0, fold.time(c0) + C0 * g * c0);
    t += C0 * fold.time(c0);
  }
  // Each virtual rank's range, halved round by round as rhd_allreduce.cc
  // cuts it: with fewer elements than 2^rounds, late rounds leave many
  // halves empty, and an empty half is not sent (halving: the half given;
  // doubling, the same round undone: the half kept).
  const int hosts = p.hosts(q.nranks);
  auto real = [&](int v) { return foldedRank(v, extra); };
  std::vector<double> lo(pw, 0), hi(pw, count);
  std::vector<int> gives(hosts), keeps(hosts);
  for (int mask = 1; mask < pw; mask *= 2) {  // nearest partner first, as built
    const Round round = foldedRound(p, q.nranks, mask);
    const LinkCost& l = *round.link;
    double give = 0, keep = 0;
    std::fill(gives.begin(), gives.end(), 0);
    std::fill(keeps.begin(), keeps.end(), 0);
    for (int v = 0; v < pw; ++v) {
      const double mid = lo[v] + std::floor((hi[v] - lo[v]) / 2);
      const bool lower = (v & mask) == 0;
      const double given = lower ? hi[v] - mid : mid - lo[v], kept = hi[v] - lo[v] - given;
      (lower ? hi[v] : lo[v]) = mid;
      give = std::max(give, given), keep = std::max(keep, kept);
      const bool crosses = !p.sameHost(real(v), real(v ^ mask));
      const int h = real(v) / p.ranksPerHost;
      gives[h] += crosses && given > 0, keeps[h] += crosses && kept > 0;
    }
    // Messages queued on one port at a time: with a shared NIC, the busiest
    // host's non-empty crossings.
    auto queued = [&](const std::vector<int>& perHost) {
      return p.sharedNic && round.sharers > 1 ? std::max(1, *std::max_element(perHost.begin(), perHost.end()))
                                              : 1;
    };
    if (give > 0) {  // halving, with reduction
      const double C = pieces(give, q), c = give * es / C, k = queued(gives);
      t += std::max(k * C * l.time(c) + g * c, l.time(c) + C * g * c);
    }
    if (keep > 0) {  // doubling: the kept halves go back
      const double C = pieces(keep, q), c = keep * es / C;
      t += queued(keeps) * C * l.time(c);
    }
  }
  return t;
}

double ringReduceScatter(const ModelQuery& q, const CostParams& p) {
  const double es = q.elemSize, count = q.bytes / es, n = q.nranks;
  if (q.nranks == 1) return p.gamma * q.bytes;
  const double C = pieces(count, q), c = count * es / C;
  return (n - 1) * reduceStep(q, p, C, c, 1);
}

double ringAllGather(const ModelQuery& q, const CostParams& p) {
  const double es = q.elemSize, count = q.bytes / es, n = q.nranks;
  const double copy = p.gamma * q.bytes;
  if (q.nranks == 1) return copy;
  const double C = pieces(count, q), c = count * es / C;
  return std::max((n - 1) * C * p.widest(q.nranks).time(c), copy);
}

double chainBroadcast(const ModelQuery& q, const CostParams& p) {
  const double C = pieces(q.bytes / q.elemSize, q), c = q.bytes / C;
  if (q.nranks == 1) return p.gamma * q.bytes;
  return std::max(lineHops(p, q.nranks, c) + (C - 1) * p.widest(q.nranks).time(c), p.gamma * q.bytes);
}

double chainReduce(const ModelQuery& q, const CostParams& p) {
  const double n = q.nranks, C = pieces(q.bytes / q.elemSize, q), c = q.bytes / C, g = p.gamma;
  if (q.nranks == 1) return g * q.bytes;
  return lineHops(p, q.nranks, c) + (n - 1) * g * c + (C - 1) * std::max(p.widest(q.nranks).time(c), g * c);
}

double pairwiseAllToAll(const ModelQuery& q, const CostParams& p) {
  // Every message is posted at once, so the busiest port sets the time: a
  // rank's network port carries its blocks to the N - h ranks of other hosts
  // (with a shared NIC, all h of its host's ranks' blocks), its host port the
  // h - 1 blocks for its neighbours. With one rank a host, round k goes to
  // r + k and the rounds stay in step; every round costs the slowest link.
  // The own block's copy overlaps the rounds.
  const int n = q.nranks, h = std::min(p.ranksPerHost, n);
  const double b = q.bytes, copy = p.gamma * b;
  if (p.hosts(n) == 1) return std::max((n - 1) * p.intra.time(b), copy);
  const double across = (p.sharedNic ? h : 1) * double(n - h);
  return std::max({across * p.inter.time(b), (h - 1) * p.intra.time(b), copy});
}

double disseminationBarrier(const ModelQuery& q, const CostParams& p) {
  // Round by round, rank r signals r + d once it has heard every earlier
  // round; signals across hosts of one host's ranks take turns on a shared NIC.
  const int n = q.nranks;
  std::vector<double> heard(n, 0), next(n, 0);
  PortClock ports(p, n);
  for (int d = 1; d < n; d *= 2) {
    for (int r = 0; r < n; ++r) {
      const int to = (r + d) % n;
      next[to] = ports.send(r, to, heard[r], p.link(r, to).alpha);
    }
    for (int r = 0; r < n; ++r) heard[r] = std::max(heard[r], next[r]);
  }
  return *std::max_element(heard.begin(), heard.end());
}

struct Entry {
  Collective collective;
  const char* name;
  Form time;
  bool usesChunks;
};

constexpr Entry kForms[] = {
    {Collective::kAllReduce, "ring", ringAllReduce, true},
    {Collective::kAllReduce, "rd", rdAllReduce, false},
    {Collective::kAllReduce, "rhd", rhdAllReduce, true},
    {Collective::kAllReduce, "tree", treeAllReduce, true},
    {Collective::kAllReduce, "hierarchical", hierarchicalAllReduce, true},
    {Collective::kReduceScatter, "ring", ringReduceScatter, true},
    {Collective::kAllGather, "ring", ringAllGather, true},
    {Collective::kAllGather, "hierarchical", hierarchicalAllGather, true},
    {Collective::kBroadcast, "chain", chainBroadcast, true},
    {Collective::kReduce, "chain", chainReduce, true},
    {Collective::kBroadcast, "binomial", binomialBroadcast, true},
    {Collective::kReduce, "binomial", binomialReduce, true},
    {Collective::kAllGather, "rd", rdAllGather, false},
    {Collective::kReduceScatter, "rh", rhReduceScatter, true},
    {Collective::kAllToAll, "bruck", bruckAllToAll, false},
    {Collective::kAllToAll, "pairwise", pairwiseAllToAll, false},
    {Collective::kBarrier, "dissemination", disseminationBarrier, false},
};

}  // namespace
}  // namespace braid::algo::forms

namespace braid::algo {

bool closedFormTime(const char* algorithm, const ModelQuery& q, const CostParams& p, double* seconds,
                    bool* usesChunks) {
  for (const forms::Entry& f : forms::kForms) {
    if (f.collective != q.collective || std::strcmp(f.name, algorithm) != 0) continue;
    *seconds = f.time(q, p);
    *usesChunks = f.usesChunks;
    return true;
  }
  return false;
}

}  // namespace braid::algo

// Closed forms of the log-round schedules of algorithms/recursive and
// algorithms/bruck: recursive doubling all-gather, recursive halving
// reduce-scatter and Bruck all-to-all. See closed_forms.h for the notation
// and the rules.
#include <vector>

#include "algorithms/tuner/closed_form_parts.h"

namespace braid::algo::forms {
namespace {

bool powerOfTwo(int n) { return (n & (n - 1)) == 0; }

}  // namespace

double rdAllGather(const ModelQuery& q, const CostParams& p) {
  const int n = q.nranks;
  const double b = q.bytes, g = p.gamma;
  if (n == 1) return g * b;
  const bool pow2 = powerOfTwo(n);
  // A power of two swaps aligned ranges with r ^ d; any other N runs Bruck's
  // rounds (r sends its k blocks from block r on to r - d). Per rank, round
  // by round: when it holds everything received so far (what its next send
  // waits for), and when its last send and receive ended (its ports).
  std::vector<double> held(n, g * b), next(n);
  PortClock ports(p, n);
  for (int d = 1; d < n; d *= 2) {
    const int k = pow2 ? d : std::min(d, n - d);
    for (int r = 0; r < n; ++r) {  // r sends its k blocks to `to`
      const int to = pow2 ? r ^ d : (r - d + n) % n, first = pow2 ? r & ~(d - 1) : r;
      const LinkCost& l = p.link(r, to);
      // A range that wraps past block N-1 travels as two messages.
      const double msg = l.time(k * b) + (first + k > n ? l.alpha : 0);
      next[to] = ports.send(r, to, d == 1 ? 0 : held[r], msg);
    }
    for (int r = 0; r < n; ++r) held[r] = std::max(held[r], next[r]);
  }
  return *std::max_element(held.begin(), held.end());
}

double rhReduceScatter(const ModelQuery& q, const CostParams& p) {
  const int n = q.nranks;
  const double es = q.elemSize, count = std::floor(q.bytes / es), g = p.gamma;
  if (n == 1) return g * q.bytes;
  const int pw = 1 << log2Floor(n), e = n - pw;
  // A halving step over `blocks` blocks, in chunks each reduced as it lands.
  // With `sharers` messages of the round queued on one port (a shared NIC).
  auto halving = [&](double blocks, const LinkCost& l, int sharers) {
    const double C = pieces(blocks * count, q), c = blocks * count * es / C;
    return std::max(sharers * C * l.time(c) + g * c, l.time(c) + C * g * c);
  };
  // Virtual rank v is rank 2v+1 (folding in rank 2v's whole input first)
  // when v < e, else rank v+e; group g < e holds two blocks. Round by round,
  // v keeps half of its groups once it and its partner have finished the
  // round before.
  auto real = [&](int v) { return foldedRank(v, e); };
  auto fold = [&](int v) -> const LinkCost& { return p.link(2 * v, 2 * v + 1); };
  auto blocks = [&](int g0, int g1) { return (g1 - g0) + std::clamp(e - g0, 0, g1 - g0); };
  auto keep = [&](int v, int mask) {
    const int lo = v & ~(2 * mask - 1), mid = lo + mask;
    return (v & mask) == 0 ? blocks(lo, mid) : blocks(mid, mid + mask);
  };
  // A round's messages across hosts, per host: with a shared NIC they take
  // turns on its port.
  auto host = [&](int rank) { return rank / p.ranksPerHost; };
  std::vector<int> crossing(p.hosts(n));
  auto sharers = [&](int v, int mask) {
    const int a = real(v), b = real(v ^ mask);
    if (!p.sharedNic || p.sameHost(a, b)) return 1;
    return std::max(crossing[host(a)], crossing[host(b)]);
  };
  std::vector<double> done(pw), next(pw);
  for (int v = 0; v < pw; ++v) done[v] = v < e ? halving(n, fold(v), 1) : 0;
  for (int mask = pw / 2; mask >= 1; mask /= 2) {
    std::fill(crossing.begin(), crossing.end(), 0);
    for (int v = 0; v < pw; ++v) crossing[host(real(v))] += !p.sameHost(real(v), real(v ^ mask));
    for (int v = 0; v < pw; ++v)
      next[v] = std::max(done[v], done[v ^ mask]) +
                halving(keep(v, mask), p.link(real(v), real(v ^ mask)), sharers(v, mask));
    done.swap(next);
  }
  // The own block is copied out; a folded rank's goes back to it meanwhile.
  const double copy = g * count * es, C = pieces(count, q);
  double t = 0;
  for (int v = 0; v < pw; ++v)
    t = std::max(t, done[v] + (v < e ? std::max(copy, C * fold(v).time(count * es / C)) : copy));
  return t;
}

double bruckAllToAll(const ModelQuery& q, const CostParams& p) {
  const int n = q.nranks;
  const double b = q.bytes, g = p.gamma;
  // Per rank: when its last send left (sent) and its last receive was
  // unpacked (got). Round d: pack once both are done, send to r + d as soon
  // as that rank has unpacked its previous round (its receive buffer is
  // free), unpack on arrival. The own block's copy runs first.
  std::vector<double> sent(n, g * b), got(n, g * b), next(n);
  PortClock ports(p, n);
  for (int d = 1; d < n; d *= 2) {
    const double k = (n / (2 * d)) * d + std::max(0, n % (2 * d) - d);  // indices with bit d set
    const double pack = g * k * b;
    for (int r = 0; r < n; ++r) {
      const int to = (r + d) % n;
      const double ready = std::max(std::max(sent[r], got[r]) + pack, got[to]);
      const double end = ports.send(r, to, ready, p.link(r, to).time(k * b));
      next[to] = end + pack;  // unpacking moves as many bytes as packing
      sent[r] = end;
    }
    got.swap(next);
  }
  return *std::max_element(got.begin(), got.end());
}

}  // namespace braid::algo::forms

// Closed forms of the tree-shaped schedules: binomial broadcast and reduce,
// the double binary tree all-reduce, and the hierarchical all-reduce (a
// reduce to each host's leader, an all-reduce across leaders, a broadcast in
// each host). See closed_forms.h for the notation and the rules.
#include <map>
#include <utility>
#include <vector>

#include "algorithms/tree/tree.h"
#include "algorithms/tuner/closed_form_parts.h"

namespace braid::algo::forms {
namespace {

// One tree of tree.h's pair, with its children listed once (tree.h's
// children() scans all N ranks on every call), in rank order as tree.h lists
// them, and its ranks from the deepest level up.
class TreeShape {
 public:
  TreeShape(const DoubleBinaryTree& trees, int n, int t) : trees_(trees), t_(t), kids_(2 * size_t(n), -1) {
    std::vector<int> below(trees.maxDepth(t) + 2, 0);  // ranks at depth < d, then a cursor
    for (int r = 0; r < n; ++r) {
      below[trees.depth(t, r) + 1]++;
      if (parent(r) < 0) continue;
      int* k = &kids_[2 * size_t(parent(r))];
      (k[0] < 0 ? k[0] : k[1]) = r;
    }
    for (size_t d = 1; d < below.size(); ++d) below[d] += below[d - 1];
    deepestFirst_.resize(n);
    for (int r = 0; r < n; ++r) deepestFirst_[n - 1 - below[trees.depth(t, r)]++] = r;
  }
  int n() const { return static_cast<int>(deepestFirst_.size()); }
  int parent(int r) const { return trees_.parent(t_, r); }
  const int* kids(int r) const { return &kids_[2 * size_t(r)]; }
  const std::vector<int>& deepestFirst() const { return deepestFirst_; }

 private:
  const DoubleBinaryTree& trees_;
  int t_;
  std::vector<int> kids_, deepestFirst_;
};

// When a lone chunk has gone up tree s and back down to its last rank. Up, a
// rank reduces its lower-ranked child's partial, then posts the receive from
// the other child; down, it sends to its children in rank order, back to
// back when both go out of one port.
double loneChunk(const TreeShape& s, const CostParams& p, double c) {
  const double gc = p.gamma * c;
  auto hop = [&](int a, int b) { return p.link(a, b).time(c); };
  std::vector<double> up(s.n(), 0.0), down(s.n(), 0.0);
  for (int r : s.deepestFirst()) {
    const int* k = s.kids(r);
    if (k[0] < 0) continue;
    up[r] = up[k[0]] + hop(k[0], r) + gc;
    if (k[1] >= 0) up[r] = std::max(up[r], up[k[1]]) + hop(k[1], r) + gc;
  }
  double last = 0;
  for (auto it = s.deepestFirst().rbegin(); it != s.deepestFirst().rend(); ++it) {
    const int r = *it, *k = s.kids(r);
    if (s.parent(r) < 0) down[r] = up[r];
    last = std::max(last, down[r]);
    if (k[0] < 0) continue;
    down[k[0]] = down[r] + hop(r, k[0]);
    if (k[1] < 0) continue;
    const bool onePort = p.sameHost(r, k[0]) == p.sameHost(r, k[1]);
    down[k[1]] = (onePort ? down[k[0]] : down[r]) + hop(r, k[1]);
  }
  return last;
}

// Per rank and pipeline slot (one chunk of each tree), the time each of its
// ports is busy ([5 r + 0/1]: egress within / across hosts, + 2: ingress)
// and its executor ([5 r + 4]): every edge carries a chunk up (child's
// egress, parent's ingress, a reduction at the parent) and one down.
// With a shared NIC a rank's ports across hosts are its host's, kept under
// the host's first rank.
size_t portBase(const CostParams& p, int r, int cls) {
  return 5 * size_t(cls == 1 && p.sharedNic ? r / p.ranksPerHost * p.ranksPerHost : r);
}

void addSlotLoads(const TreeShape& s, const CostParams& p, double c, std::vector<double>* load) {
  for (int r = 0; r < s.n(); ++r) {
    const int par = s.parent(r);
    if (par < 0) continue;
    const int cls = p.sameHost(r, par) ? 0 : 1;
    const size_t a = portBase(p, r, cls), b = portBase(p, par, cls);
    const double e = p.link(r, par).time(c);
    (*load)[a + cls] += e, (*load)[a + 2 + cls] += e;
    (*load)[b + cls] += e, (*load)[b + 2 + cls] += e;
    (*load)[5 * size_t(par) + 4] += p.gamma * c;
  }
}

// The slot's length at the ports, with a slot's messages served greedily,
// as the model serves them (each port takes whichever message is ready
// first): a message then waits only while its sender's egress or its
// receiver's ingress is busy with another, so the last of the k messages
// from u to v is done within the two ports' loads less k t (those k hold
// both ports at once). On one host that is 4 + 4 - 1 = 7 t(c), where the
// busiest port alone would say 4 t(c); the model runs near the bound (6.4 to
// 7.1 t(c) a slot with free reductions).
double greedySlot(const TreeShape (&trees)[2], const CostParams& p, double c, const std::vector<double>& load) {
  auto messages = [&](int u, int v) {  // from u to v per slot: up one tree, down the other
    int k = 0;
    for (const TreeShape& s : trees) k += (s.parent(u) == v) + (s.parent(v) == u);
    return k;
  };
  std::map<std::pair<int, int>, int> betweenHosts;  // messages per slot from host to host
  if (p.sharedNic) {
    for (const TreeShape& s : trees) {
      for (int r = 0; r < s.n(); ++r) {
        const int par = s.parent(r);
        if (par < 0 || p.sameHost(r, par)) continue;
        const int hr = r / p.ranksPerHost, hp = par / p.ranksPerHost;
        betweenHosts[{hr, hp}]++, betweenHosts[{hp, hr}]++;  // a chunk up, one down
      }
    }
  }
  auto hostMessages = [&](int u, int v) { return betweenHosts[{u / p.ranksPerHost, v / p.ranksPerHost}]; };
  double slot = 0;
  for (const TreeShape& s : trees) {
    for (int r = 0; r < s.n(); ++r) {
      const int par = s.parent(r);
      if (par < 0) continue;
      const int cls = p.sameHost(r, par) ? 0 : 1;
      const double e = p.link(r, par).time(c);
      const size_t a = portBase(p, r, cls), b = portBase(p, par, cls);
      // With a shared NIC the ports are the hosts': count the messages
      // between the two hosts.
      const bool hosts = cls == 1 && p.sharedNic;
      const double up = hosts ? hostMessages(r, par) : messages(r, par);
      const double down = hosts ? hostMessages(par, r) : messages(par, r);
      slot = std::max(
          {slot, load[a + cls] + load[b + 2 + cls] - up * e, load[b + cls] + load[a + 2 + cls] - down * e});
    }
  }
  return slot;
}

}  // namespace

// A walk over the ranks, parents first (v = rank - root, with the root taken
// as rank 0, host-aligned as the tuner's queries have it): each serves its
// children largest subtree first, those across hosts and those within on
// their own ports at once. A lone chunk reaches the last rank at the latest
// arrival; each further one adds the busiest port's sends of one chunk (the
// root's on a power-of-two host size: Le t_e(c) or Li t_i(c)). The root's
// copy into its output overlaps.
double binomialBroadcast(const ModelQuery& q, const CostParams& p) {
  const int n = q.nranks;
  const double C = pieces(q.bytes / q.elemSize, q), c = q.bytes / C;
  if (n == 1) return p.gamma * q.bytes;
  std::vector<double> at(n, 0.0);  // when rank v has the chunk
  double lone = 0, busiest = 0;
  for (int v = 0; v < n; ++v) {
    lone = std::max(lone, at[v]);
    double port[2] = {at[v], at[v]};  // within, across
    const int limit = v == 0 ? n : (v & -v);
    int m = 1;
    while (m * 2 < limit) m *= 2;
    for (; m >= 1; m /= 2) {
      if (m >= limit || v + m >= n) continue;
      const int cls = p.sameHost(v, v + m) ? 0 : 1;
      at[v + m] = port[cls] += p.link(v, v + m).time(c);
    }
    busiest = std::max({busiest, port[0] - at[v], port[1] - at[v]});
  }
  return std::max(lone + (C - 1) * busiest, p.gamma * q.bytes);
}

// The same walk, children before parents: a rank folds in its children's
// partials smallest subtree first, in a chain (a child's receive is posted
// once the previous child's partial is reduced). The first chunk takes the
// chain through the root; each further one the busiest ingress port or
// executor (the root's on a power-of-two host size: Le t_e(c), Li t_i(c) or
// L g c).
double binomialReduce(const ModelQuery& q, const CostParams& p) {
  const int n = q.nranks;
  const double C = pieces(q.bytes / q.elemSize, q), c = q.bytes / C, gc = p.gamma * c;
  if (n == 1) return p.gamma * q.bytes;
  std::vector<double> ready(n, 0.0);  // when rank v's partial of the chunk is complete
  double busiest = 0;
  for (int v = n - 1; v >= 0; --v) {
    double port[2] = {0, 0}, folds = 0;  // within, across; the executor
    const int limit = v == 0 ? n : (v & -v);
    for (int m = 1; m < limit && v + m < n; m *= 2) {
      const int cls = p.sameHost(v, v + m) ? 0 : 1;
      const double t = p.link(v, v + m).time(c);
      ready[v] = std::max(ready[v], ready[v + m]) + t + gc;
      port[cls] += t, folds += gc;
    }
    busiest = std::max({busiest, port[0], port[1], folds});
  }
  return ready[0] + (C - 1) * busiest;
}

double treeAllReduce(const ModelQuery& q, const CostParams& p) {
  const double es = q.elemSize, count = std::floor(q.bytes / es);
  if (q.nranks == 1) return p.gamma * q.bytes;
  const double half = std::ceil(count / 2), C = pieces(half, q), c = half * es / C;
  const DoubleBinaryTree pair(q.nranks);
  const TreeShape trees[2] = {TreeShape(pair, q.nranks, 0), TreeShape(pair, q.nranks, 1)};
  const double lone = std::max(loneChunk(trees[0], p, c), loneChunk(trees[1], p, c));
  if (C == 1) return lone;
  std::vector<double> load(5 * size_t(q.nranks), 0.0);
  for (const TreeShape& s : trees) addSlotLoads(s, p, c, &load);
  const double ports = greedySlot(trees, p, c, load);
  double executor = 0;
  for (int r = 0; r < q.nranks; ++r) executor = std::max(executor, load[5 * size_t(r) + 4]);
  // The executor serves reductions first come, first served: a rank whose
  // first child is a leaf gets every chunk of it at once (a leaf sends its
  // input, and that receive waits for nothing) and folds them all before its
  // other child's first, so the partials start up the tree C g c late.
  bool flood = false;
  for (const TreeShape& s : trees)
    for (int r = 0; r < q.nranks && !flood; ++r)
      flood = s.kids(r)[1] >= 0 && s.kids(s.kids(r)[0])[0] < 0;
  return lone + std::max((C - 1) * ports, (flood ? C * p.gamma * c : 0) + (C - 1) * executor);
}

double hierarchicalAllReduce(const ModelQuery& q, const CostParams& p) {
  const int h = std::min(p.ranksPerHost, q.nranks), hosts = p.hosts(q.nranks);
  const double bytes = q.bytes, g = p.gamma, C = pieces(bytes / q.elemSize, q), c = bytes / C;
  const double ti = p.intra.time(c), gc = g * c;
  // Phase 1: the leader copies each chunk and folds in the h - 1 local ones
  // in a chain; its executor takes every copy first (all are ready at once),
  // so the phase is bound by one chunk's chain, its ingress port or h g n.
  double t = C * gc;
  if (h > 1) t = std::max({gc + (h - 1) * (ti + gc), 2 * gc + C * (h - 1) * ti, C * h * gc});
  // Phase 2: the leaders' flat all-reduce, every hop across hosts.
  double t2 = 0;
  if (hosts > 1) {
    ModelQuery across = q;
    across.nranks = hosts;
    CostParams leaders = p;
    leaders.intra = p.inter;
    leaders.ranksPerHost = 1;
    t2 = bytes <= (64 << 10) ? rdAllReduce(across, leaders) : ringAllReduce(across, leaders);
  }
  // Phase 3: the leader sends each chunk to each local rank, one port, as
  // soon as phase 2 is done with it, so only what phase 2 finishes last is
  // left after it: the ring's last segment (1/H of the chunks), or all of
  // them after recursive doubling, whose every round writes the whole
  // vector. Phase 1 is not overlapped here: its reductions hold the leader's
  // executor ahead of phase 2's (they are ready first), so phase 2 waits.
  // Only the size h of the busiest host and the host count matter, so this
  // holds for hosts of equal size however ranks are placed on them (the
  // algorithm reads the layout from CollectiveArgs::hostOf; the tests place
  // hosts in blocks of h, as the cost model does). The ring's last segment is at least one chunk; and the
  // ring finishes its first segment after its reduce-scatter, half its time, so a hand-back slower than the
  // all-gather ends after it.
  const double handBack = C * (h - 1) * ti;
  if (hosts < 2 || bytes <= (64 << 10)) return t + t2 + handBack;
  const double tail = std::max(t2 + std::max(handBack / hosts, (h - 1) * ti), t2 / 2 + handBack);
  // Phase 1 hides behind the ring when it folds a segment faster than a ring
  // step moves one (the ring needs one more segment each step): then only
  // the first segment's fold (at least a chunk's) comes before phase 2.
  // With one rank a host phase 1 is the copy alone, which the ring's first
  // sends wait for whole.
  const double firstFold = t / std::min<double>(hosts, C), ringStep = t2 / (2 * (hosts - 1));
  if (h > 1 && firstFold <= ringStep) return firstFold + tail;
  return t + tail;
}

// The leader's two ports set the pace: across hosts it sends the h blocks of
// one host per ring step, (H - 1) h C messages in all; within its host it
// hands every block to each of its h - 1 ranks, (h - 1)(N - 1) C messages.
// The two overlap chunk by chunk. Before them: the first gathered chunk;
// after: the last chunk to reach the leader still goes to each local rank.
// The own block's copy overlaps.
double hierarchicalAllGather(const ModelQuery& q, const CostParams& p) {
  const int n = q.nranks, h = std::min(p.ranksPerHost, n), hosts = p.hosts(n);
  const double b = q.bytes, C = pieces(b / q.elemSize, q), c = b / C;
  if (n == 1) return p.gamma * b;
  const double ti = p.intra.time(c), across = (hosts - 1) * double(h) * C * p.inter.time(c);
  const double within = (h - 1) * double(n - 1) * C * ti;
  return std::max(p.gamma * b, (h > 1 ? ti : 0) + std::max(across, within) + (h - 1) * ti);
}

}  // namespace braid::algo::forms

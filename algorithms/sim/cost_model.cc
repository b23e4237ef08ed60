#include "algorithms/sim/cost_model.h"

#include <algorithm>
#include <queue>
#include <string>

namespace braid::algo {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

bool isSend(StepKind k) { return k == StepKind::kSend; }
bool isRecv(StepKind k) { return k == StepKind::kRecv || k == StepKind::kRecvReduce; }

// Every rank's steps in flat arrays indexed by a global step id (rank r's
// step i is base[r] + i), dependents as CSR, and per (rank, peer) the sends
// and receives in schedule order.
struct Graph {
  int n = 0;
  std::vector<uint32_t> base{0};
  std::vector<StepKind> kind;
  std::vector<uint32_t> rank, peer;
  std::vector<uint64_t> bytes;
  std::vector<uint32_t> waiting;          // unfinished dependencies
  std::vector<uint32_t> outBegin{0}, out;  // dependents
  std::vector<uint32_t> sendOff, recvOff;  // [r * (n + 1) + p]: into sendList / recvList
  std::vector<uint32_t> sendList, recvList;

  size_t size() const { return kind.size(); }

  // Appends rank r (ranks must come in order 0..n-1).
  void add(int r, const Schedule& s) {
    const uint32_t b = base.back();
    for (const Step& step : s.steps) {
      kind.push_back(step.kind);
      rank.push_back(r);
      peer.push_back(static_cast<uint32_t>(step.peer));
      // Sends move their source; an encode works on its host values; the rest on dst.
      const bool bySrc = step.kind == StepKind::kSend || step.kind == StepKind::kEncode;
      bytes.push_back(bySrc ? step.src.bytes : step.dst.bytes);
      waiting.push_back(step.depCount);
    }
    // Dependents: count, then fill (deps point backwards within the rank).
    std::vector<uint32_t> count(s.steps.size() + 1, 0);
    for (StepId d : s.deps) count[d + 1]++;
    for (size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
    const uint32_t outBase = static_cast<uint32_t>(out.size());
    out.resize(out.size() + s.deps.size());
    std::vector<uint32_t> fill(count.begin(), count.end() - 1);
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const Step& step = s.steps[i];
      for (uint32_t k = 0; k < step.depCount; ++k) out[outBase + fill[s.deps[step.depBegin + k]]++] = b + i;
    }
    for (size_t i = 1; i < count.size(); ++i) outBegin.push_back(outBase + count[i]);
    // Channels, grouped by peer in schedule order.
    auto group = [&](bool (*pick)(StepKind), std::vector<uint32_t>& off, std::vector<uint32_t>& list) {
      std::vector<uint32_t> c(n + 1, 0);
      for (const Step& step : s.steps)
        if (pick(step.kind) && step.peer >= 0 && step.peer < n) c[step.peer + 1]++;
      for (int p = 1; p <= n; ++p) c[p] += c[p - 1];
      const uint32_t listBase = static_cast<uint32_t>(list.size());
      for (int p = 0; p <= n; ++p) off.push_back(listBase + c[p]);
      list.resize(list.size() + c[n]);
      for (size_t i = 0; i < s.steps.size(); ++i)
        if (pick(s.steps[i].kind) && s.steps[i].peer >= 0 && s.steps[i].peer < n)
          list[listBase + c[s.steps[i].peer]++] = b + i;
    };
    group(isSend, sendOff, sendList);
    group(isRecv, recvOff, recvList);
    base.push_back(b + static_cast<uint32_t>(s.steps.size()));
  }
};

struct Event {
  enum Kind : uint8_t { kDone, kCpu, kKick };
  double t;
  uint64_t seq;
  uint32_t step;  // an egress port for kKick
  Kind kind;      // kCpu: the reduction half of a recv-reduce may start
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Simulation {
 public:
  Simulation(Graph& g, const CostParams& p)
      : g_(g), p_(p), n_(g.n), finish_(g.size(), -1), ready_(g.size(), -1), cause_(g.size(), kNone),
        sendHead_(size_t(n_) * n_, 0), recvHead_(size_t(n_) * n_, 0), match_(g.size(), kNone),
        postSeq_(g.size(), 0), egressBusy_(2 * size_t(n_), 0), kickPending_(2 * size_t(n_), 0),
        egressFree_(2 * size_t(n_), 0), egressLast_(2 * size_t(n_), kNone), queue_(2 * size_t(n_)),
        ingressFree_(2 * size_t(n_), 0), ingressLast_(2 * size_t(n_), kNone), cpuFree_(n_, 0), cpuLast_(n_, kNone) {}

  Status run(Prediction* out) {
    for (uint32_t s = 0; s < g_.size(); ++s)
      if (g_.waiting[s] == 0) BRAID_RETURN_IF_ERROR(onReady(s, 0));
    size_t done = 0;
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
      if (e.kind == Event::kKick) {
        onKick(e.step, e.t);
        continue;
      }
      if (e.kind == Event::kCpu) {
        compute(e.step, e.t);
        continue;
      }
      finish_[e.step] = e.t;
      ++done;
      if (isSend(g_.kind[e.step])) release(e.step, e.t);
      for (uint32_t k = g_.outBegin[e.step]; k < g_.outBegin[e.step + 1]; ++k) {
        uint32_t d = g_.out[k];
        if (--g_.waiting[d] == 0) {
          cause_[d] = e.step;
          BRAID_RETURN_IF_ERROR(onReady(d, e.t));
        }
      }
    }
    if (done != g_.size()) {
      for (int r = 0; r < n_; ++r)
        for (uint32_t s = g_.base[r]; s < g_.base[r + 1]; ++s)
          if (finish_[s] < 0)
            return internalError("cost model: rank " + std::to_string(r) + " is stuck at step " +
                                 std::to_string(s - g_.base[r]) + " (" + stepKindName(g_.kind[s]) + ")");
    }
    summarize(out);
    return Status::ok();
  }

 private:
  Status onReady(uint32_t s, double t) {
    ready_[s] = t;
    const StepKind k = g_.kind[s];
    if (isSend(k)) return post(g_.rank[s], g_.peer[s], true, t);
    if (isRecv(k)) return post(g_.peer[s], g_.rank[s], false, t);
    compute(s, t);
    return Status::ok();
  }

  // Posts, in order, the ready steps at the head of channel a -> b on the
  // sending (send) or receiving side, starting each message whose other side
  // is already posted.
  Status post(uint32_t a, uint32_t b, bool send, double t) {
    uint32_t& head = send ? sendHead_[size_t(a) * n_ + b] : recvHead_[size_t(b) * n_ + a];
    const uint32_t* list = send ? &g_.sendList[g_.sendOff[a * (n_ + 1) + b]]
                                : &g_.recvList[g_.recvOff[b * (n_ + 1) + a]];
    const uint32_t count = send ? g_.sendOff[a * (n_ + 1) + b + 1] - g_.sendOff[a * (n_ + 1) + b]
                                : g_.recvOff[b * (n_ + 1) + a + 1] - g_.recvOff[b * (n_ + 1) + a];
    const uint32_t other = send ? recvHead_[size_t(b) * n_ + a] : sendHead_[size_t(a) * n_ + b];
    while (head < count && ready_[list[head]] >= 0) {
      const uint32_t k = head++, mine = list[k];
      if (send) postSeq_[mine] = posted_++;
      if (k >= other) continue;  // the other side posts later and starts it
      const uint32_t peerStep = send ? g_.recvList[g_.recvOff[b * (n_ + 1) + a] + k]
                                     : g_.sendList[g_.sendOff[a * (n_ + 1) + b] + k];
      BRAID_RETURN_IF_ERROR(start(send ? mine : peerStep, send ? peerStep : mine, cause_[mine], t));
    }
    return Status::ok();
  }

  // Message s -> m waits for its sender's egress port, which sends matched
  // messages in the order their sends were posted (a port freed or matched
  // at time t decides after every match at t, through a kick event). Once
  // launched it starts when the receiver's ingress port is free too (until
  // then the egress port is held, as a blocked socket holds its sender) and
  // ends a link time later.
  Status start(uint32_t s, uint32_t m, uint32_t cause, double t) {
    if (g_.bytes[s] != g_.bytes[m])
      return internalError("cost model: rank " + std::to_string(g_.rank[s]) + " sends " +
                           std::to_string(g_.bytes[s]) + " bytes where rank " + std::to_string(g_.rank[m]) +
                           " receives " + std::to_string(g_.bytes[m]));
    match_[s] = m;
    cause_[s] = cause_[m] = cause;
    const size_t eg = egress(s);
    queue_[eg].push({postSeq_[s], s});
    kick(eg, t);
    return Status::ok();
  }

  bool sameHost(uint32_t s) const { return p_.sameHost(g_.rank[s], g_.peer[s]); }
  // Across hosts with a shared NIC, a host's ranks use its first rank's port.
  size_t port(uint32_t rank, bool local) const {
    if (local) return 2 * size_t(rank);
    return 2 * size_t(p_.sharedNic ? rank / p_.ranksPerHost * p_.ranksPerHost : rank) + 1;
  }
  size_t egress(uint32_t s) const { return port(g_.rank[s], sameHost(s)); }
  size_t ingress(uint32_t s) const { return port(g_.peer[s], sameHost(s)); }

  void kick(size_t eg, double t) {
    if (egressBusy_[eg] || kickPending_[eg]) return;
    kickPending_[eg] = 1;
    events_.push({t, seq_++, static_cast<uint32_t>(eg), Event::kKick});
  }

  void onKick(size_t eg, double t) {
    kickPending_[eg] = 0;
    if (egressBusy_[eg] || queue_[eg].empty()) return;
    const uint32_t s = queue_[eg].top().second, m = match_[s];
    queue_[eg].pop();
    const size_t in = ingress(s);
    if (egressLast_[eg] != kNone && egressFree_[eg] == t) cause_[s] = cause_[m] = egressLast_[eg];
    double from = t;
    if (ingressFree_[in] > from) from = ingressFree_[in], cause_[s] = cause_[m] = ingressLast_[in];
    const double end = from + p_.link(g_.rank[s], g_.rank[m]).time(static_cast<double>(g_.bytes[s]));
    egressBusy_[eg] = 1;
    ingressFree_[in] = end;
    ingressLast_[in] = egressLast_[eg] = m;
    push(end, s, Event::kDone);
    push(end, m, g_.kind[m] == StepKind::kRecvReduce ? Event::kCpu : Event::kDone);
  }

  // Message s has left: its sender's port takes the next one.
  void release(uint32_t s, double t) {
    const size_t eg = egress(s);
    egressBusy_[eg] = 0;
    egressFree_[eg] = t;
    if (!queue_[eg].empty()) kick(eg, t);
  }

  // Local work on the rank's executor thread, from time t.
  void compute(uint32_t s, double t) {
    const uint32_t r = g_.rank[s];
    double from = t;
    if (cpuFree_[r] > from) from = cpuFree_[r], cause_[s] = cpuLast_[r];
    const double end = from + p_.gamma * static_cast<double>(g_.bytes[s]);
    cpuFree_[r] = end;
    cpuLast_[r] = s;
    push(end, s, Event::kDone);
  }

  void push(double t, uint32_t s, Event::Kind kind) { events_.push({t, seq_++, s, kind}); }

  void summarize(Prediction* out) {
    Prediction p;
    uint32_t last = kNone;
    for (uint32_t s = 0; s < g_.size(); ++s) {
      p.steps++;
      if (isRecv(g_.kind[s])) p.messages++, p.bytes += g_.bytes[s];
      if (last == kNone || finish_[s] > finish_[last]) last = s;
    }
    if (last != kNone) p.seconds = finish_[last];
    for (uint32_t s = last; s != kNone && p.criticalSteps <= g_.size(); s = cause_[s]) {
      p.criticalSteps++;
      if (isSend(g_.kind[s]) || isRecv(g_.kind[s])) p.criticalMessages++, p.criticalBytes += g_.bytes[s];
    }
    *out = p;
  }

  Graph& g_;
  const CostParams& p_;
  const int n_;
  std::vector<double> finish_, ready_;
  std::vector<uint32_t> cause_;  // what held the step up (kNone: nothing)
  std::vector<uint32_t> sendHead_, recvHead_;  // [a * n + b]: posted so far on channel a -> b
  std::vector<uint32_t> match_;      // send step -> its receive step, once both are posted
  std::vector<uint64_t> postSeq_;    // by send step: when it was posted, in event order
  uint64_t posted_ = 0;
  // Ports [2r]: same host, [2r + 1]: across hosts, one set per direction.
  std::vector<uint8_t> egressBusy_, kickPending_;
  std::vector<double> egressFree_;
  std::vector<uint32_t> egressLast_;
  using Waiting = std::pair<uint64_t, uint32_t>;  // (postSeq, send step)
  std::vector<std::priority_queue<Waiting, std::vector<Waiting>, std::greater<Waiting>>> queue_;
  std::vector<double> ingressFree_;
  std::vector<uint32_t> ingressLast_;  // the message (its receive step) that holds it last
  std::vector<double> cpuFree_;
  std::vector<uint32_t> cpuLast_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
};

Status checkPeers(int r, int n, const Schedule& s) {
  for (size_t i = 0; i < s.steps.size(); ++i)
    if ((isSend(s.steps[i].kind) || isRecv(s.steps[i].kind)) && (s.steps[i].peer < 0 || s.steps[i].peer >= n))
      return internalError("cost model: rank " + std::to_string(r) + " step " + std::to_string(i) +
                           " has peer " + std::to_string(s.steps[i].peer));
  return Status::ok();
}

}  // namespace

Status predictTime(int nranks, const RankBuilder& build, const CostParams& params, Prediction* out) {
  if (nranks < 1 || params.ranksPerHost < 1) return invalidArgument("cost model: bad rank layout");
  Graph g;
  g.n = nranks;
  for (int r = 0; r < nranks; ++r) {
    Schedule s;
    BRAID_RETURN_IF_ERROR(build(r, &s));
    BRAID_RETURN_IF_ERROR(checkPeers(r, nranks, s));
    g.add(r, s);
  }
  return Simulation(g, params).run(out);
}

Status predictTime(const std::vector<const Schedule*>& schedules, const CostParams& params,
                   Prediction* out) {
  return predictTime(
      static_cast<int>(schedules.size()),
      [&](int r, Schedule* s) {
        *s = *schedules[r];
        return Status::ok();
      },
      params, out);
}

}  // namespace braid::algo

#include "algorithms/sim/simulator.h"

#include <cstring>
#include <random>
#include <string>
#include <unordered_map>

#include "algorithms/local_step.h"
#include "kernels/reduce.h"

// Event-driven: a step enters the eligible pool exactly once, when the last of
// its conditions becomes true (dependencies done; for a send, first unissued
// send of its channel; for a receive, first of its channel with a message
// waiting). Each step is visited a constant number of times, so a run costs
// O(steps + deps) instead of rescanning every rank's schedule per pass.
namespace braid::algo {
namespace {

struct RankState {
  std::vector<std::vector<char>> scratch;
  std::vector<uint32_t> waiting;  // unfinished deps
  std::vector<uint8_t> queued;    // entered the eligible pool (at most once)
  std::vector<uint32_t> dependentsBegin;  // CSR of reverse edges
  std::vector<StepId> dependents;
  // Per-peer channels in schedule order, CSR: sends to p are
  // sendSteps[sendBegin[p] .. sendBegin[p+1]), sendHead[p] the next one.
  std::vector<uint32_t> sendBegin, recvBegin, sendHead, recvHead;
  std::vector<StepId> sendSteps, recvSteps;
  size_t finished = 0;
};

struct Pipe {  // messages from one rank to another, not yet received
  std::vector<std::vector<char>> messages;
  size_t head = 0;
  bool empty() const { return head == messages.size(); }
};

bool isRecv(StepKind k) { return k == StepKind::kRecv || k == StepKind::kRecvReduce; }

void buildChannels(const Schedule& s, int n, bool sends, std::vector<uint32_t>* begin,
                   std::vector<StepId>* steps) {
  begin->assign(n + 1, 0);
  for (const Step& st : s.steps)
    if (sends ? st.kind == StepKind::kSend : isRecv(st.kind)) (*begin)[st.peer + 1]++;
  for (int p = 0; p < n; ++p) (*begin)[p + 1] += (*begin)[p];
  steps->resize((*begin)[n]);
  std::vector<uint32_t> fill(begin->begin(), begin->end() - 1);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (sends ? st.kind == StepKind::kSend : isRecv(st.kind)) (*steps)[fill[st.peer]++] = static_cast<StepId>(i);
  }
}

class Sim {
 public:
  Sim(std::vector<SimRank>& ranks, const SimOptions& options)
      : ranks_(ranks), n_(static_cast<int>(ranks.size())), seed_(options.seed), rng_(options.seed),
        st_(ranks.size()) {}

  Status run() {
    for (int r = 0; r < n_; ++r) prepare(r);
    for (int r = 0; r < n_; ++r)
      for (size_t i = 0; i < ranks_[r].schedule->steps.size(); ++i) tryQueue(r, static_cast<StepId>(i));
    while (!pool_.empty()) {
      size_t pick = pool_.size() - 1;  // seed 0: last in, first out
      if (seed_ != 0) pick = std::uniform_int_distribution<size_t>(0, pool_.size() - 1)(rng_);
      auto [r, i] = pool_[pick];
      pool_[pick] = pool_.back();
      pool_.pop_back();
      BRAID_RETURN_IF_ERROR(execute(r, i));
    }
    return finalCheck();
  }

 private:
  void prepare(int r) {
    const Schedule& s = *ranks_[r].schedule;
    RankState& rs = st_[r];
    for (size_t b : s.scratchBytes) rs.scratch.emplace_back(b);
    const size_t steps = s.steps.size();
    rs.waiting.resize(steps);
    rs.queued.assign(steps, 0);
    rs.dependentsBegin.assign(steps + 1, 0);
    for (const Step& step : s.steps)
      for (uint32_t k = 0; k < step.depCount; ++k) rs.dependentsBegin[s.deps[step.depBegin + k] + 1]++;
    for (size_t i = 0; i < steps; ++i) rs.dependentsBegin[i + 1] += rs.dependentsBegin[i];
    rs.dependents.resize(rs.dependentsBegin[steps]);
    std::vector<uint32_t> fill(rs.dependentsBegin.begin(), rs.dependentsBegin.end() - 1);
    for (size_t i = 0; i < steps; ++i) {
      const Step& step = s.steps[i];
      rs.waiting[i] = step.depCount;
      for (uint32_t k = 0; k < step.depCount; ++k)
        rs.dependents[fill[s.deps[step.depBegin + k]]++] = static_cast<StepId>(i);
    }
    buildChannels(s, n_, true, &rs.sendBegin, &rs.sendSteps);
    buildChannels(s, n_, false, &rs.recvBegin, &rs.recvSteps);
    rs.sendHead.assign(n_, 0);
    rs.recvHead.assign(n_, 0);
  }

  Pipe& pipe(int from, int to) { return pipes_[static_cast<uint64_t>(from) * n_ + to]; }

  // Queues step i of rank r if it can run now and is not queued yet.
  void tryQueue(int r, StepId i) {
    RankState& rs = st_[r];
    if (rs.queued[i] || rs.waiting[i] != 0) return;
    const Step& step = ranks_[r].schedule->steps[i];
    if (step.kind == StepKind::kSend) {
      const uint32_t at = rs.sendBegin[step.peer] + rs.sendHead[step.peer];
      if (rs.sendSteps[at] != i) return;
    } else if (isRecv(step.kind)) {
      const uint32_t at = rs.recvBegin[step.peer] + rs.recvHead[step.peer];
      if (rs.recvSteps[at] != i) return;
      auto it = pipes_.find(static_cast<uint64_t>(step.peer) * n_ + r);
      if (it == pipes_.end() || it->second.empty()) return;
    }
    rs.queued[i] = 1;
    pool_.push_back({r, i});
  }

  char* addr(int r, const Region& g) {
    char* base = isScratch(g.buffer) ? st_[r].scratch[scratchIndex(g.buffer)].data()
                                     : static_cast<char*>(ranks_[r].buffers[g.buffer]);
    return base + g.offset;
  }

  Status execute(int r, StepId i) {
    const Step& step = ranks_[r].schedule->steps[i];
    RankState& rs = st_[r];
    switch (step.kind) {
      case StepKind::kSend: {
        const char* src = addr(r, step.src);
        pipe(r, step.peer).messages.emplace_back(src, src + step.src.bytes);
        const uint32_t next = rs.sendBegin[step.peer] + ++rs.sendHead[step.peer];
        if (next < rs.sendBegin[step.peer + 1]) tryQueue(r, rs.sendSteps[next]);
        // The peer's next receive from r may have been waiting for this message.
        RankState& ps = st_[step.peer];
        const uint32_t want = ps.recvBegin[r] + ps.recvHead[r];
        if (want < ps.recvBegin[r + 1]) tryQueue(step.peer, ps.recvSteps[want]);
        break;
      }
      case StepKind::kRecv:
      case StepKind::kRecvReduce: {
        Pipe& p = pipe(step.peer, r);
        std::vector<char> msg = std::move(p.messages[p.head++]);
        if (msg.size() != step.dst.bytes)
          return internalError("rank " + std::to_string(r) + " step " + std::to_string(i) + " expected " +
                               std::to_string(step.dst.bytes) + " bytes from rank " + std::to_string(step.peer) +
                               ", got " + std::to_string(msg.size()));
        char* dst = addr(r, step.dst);
        if (step.kind == StepKind::kRecv) {
          if (!msg.empty()) std::memcpy(dst, msg.data(), msg.size());
        } else {
          kernels::reduce(dst, addr(r, step.src), msg.data(), msg.size() / dataTypeSize(step.dtype), step.dtype,
                          step.op);
        }
        const uint32_t next = rs.recvBegin[step.peer] + ++rs.recvHead[step.peer];
        if (next < rs.recvBegin[step.peer + 1]) tryQueue(r, rs.recvSteps[next]);
        break;
      }
      default:
        runLocalStep(step, step.kind == StepKind::kDivide ? nullptr : addr(r, step.src), addr(r, step.dst));
        break;
    }
    rs.finished++;
    for (uint32_t k = rs.dependentsBegin[i]; k < rs.dependentsBegin[i + 1]; ++k) {
      StepId d = rs.dependents[k];
      if (--rs.waiting[d] == 0) tryQueue(r, d);
    }
    return Status::ok();
  }

  Status finalCheck() const {
    for (int r = 0; r < n_; ++r) {
      if (st_[r].finished != ranks_[r].schedule->steps.size())
        return internalError("deadlock: rank " + std::to_string(r) + " finished " +
                             std::to_string(st_[r].finished) + " of " +
                             std::to_string(ranks_[r].schedule->steps.size()) + " steps");
    }
    for (const auto& [key, p] : pipes_)
      if (!p.empty())
        return internalError("rank " + std::to_string(key / n_) + " sent " +
                             std::to_string(p.messages.size() - p.head) + " message(s) to rank " +
                             std::to_string(key % n_) + " that were never received");
    return Status::ok();
  }

  std::vector<SimRank>& ranks_;
  const int n_;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  std::vector<RankState> st_;
  std::unordered_map<uint64_t, Pipe> pipes_;  // key from * n + to
  std::vector<std::pair<int, StepId>> pool_;  // eligible steps
};

}  // namespace

Status simulate(std::vector<SimRank>& ranks, const SimOptions& options) { return Sim(ranks, options).run(); }

Status simulate(std::vector<SimRank>& ranks) { return simulate(ranks, SimOptions{}); }

}  // namespace braid::algo

#include "algorithms/sim/simulator.h"

#include <cstring>
#include <deque>
#include <string>

#include "kernels/reduce.h"

namespace braid::algo {
namespace {

struct RankState {
  std::vector<std::vector<char>> scratch;
  std::vector<uint32_t> waiting;        // unfinished deps
  std::vector<uint8_t> done;
  std::vector<std::vector<StepId>> sendQ, recvQ;  // per peer, schedule order
  std::vector<size_t> sendHead, recvHead;
  size_t finished = 0;
};

char* addr(SimRank& r, RankState& st, const Region& g) {
  char* base = isScratch(g.buffer) ? st.scratch[scratchIndex(g.buffer)].data()
                                   : static_cast<char*>(r.buffers[g.buffer]);
  return base + g.offset;
}

}  // namespace

Status simulate(std::vector<SimRank>& ranks) {
  const int n = static_cast<int>(ranks.size());
  std::vector<RankState> st(n);
  // fifo[a * n + b]: messages from a to b not yet received.
  std::vector<std::deque<std::vector<char>>> fifo(n * n);
  for (int r = 0; r < n; ++r) {
    const Schedule& s = *ranks[r].schedule;
    RankState& rs = st[r];
    for (size_t b : s.scratchBytes) rs.scratch.emplace_back(b);
    rs.waiting.resize(s.steps.size());
    rs.done.assign(s.steps.size(), 0);
    rs.sendQ.assign(n, {});
    rs.recvQ.assign(n, {});
    rs.sendHead.assign(n, 0);
    rs.recvHead.assign(n, 0);
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const Step& step = s.steps[i];
      rs.waiting[i] = step.depCount;
      if (step.kind == StepKind::kSend) rs.sendQ[step.peer].push_back(i);
      if (step.kind == StepKind::kRecv || step.kind == StepKind::kRecvReduce) rs.recvQ[step.peer].push_back(i);
    }
  }
  auto depsDone = [&](int r, StepId i) {
    const Schedule& s = *ranks[r].schedule;
    const Step& step = s.steps[i];
    for (uint32_t k = 0; k < step.depCount; ++k)
      if (!st[r].done[s.deps[step.depBegin + k]]) return false;
    return true;
  };
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (int r = 0; r < n; ++r) {
      const Schedule& s = *ranks[r].schedule;
      RankState& rs = st[r];
      for (size_t i = 0; i < s.steps.size(); ++i) {
        if (rs.done[i] || !depsDone(r, i)) continue;
        const Step& step = s.steps[i];
        switch (step.kind) {
          case StepKind::kSend: {
            if (rs.sendQ[step.peer][rs.sendHead[step.peer]] != i) continue;
            const char* src = addr(ranks[r], rs, step.src);
            fifo[r * n + step.peer].emplace_back(src, src + step.src.bytes);
            rs.sendHead[step.peer]++;
            break;
          }
          case StepKind::kRecv:
          case StepKind::kRecvReduce: {
            auto& q = fifo[step.peer * n + r];
            if (rs.recvQ[step.peer][rs.recvHead[step.peer]] != i || q.empty()) continue;
            std::vector<char> msg = std::move(q.front());
            q.pop_front();
            if (msg.size() != step.dst.bytes)
              return internalError("rank " + std::to_string(r) + " step " + std::to_string(i) +
                                   " expected " + std::to_string(step.dst.bytes) + " bytes from rank " +
                                   std::to_string(step.peer) + ", got " + std::to_string(msg.size()));
            char* dst = addr(ranks[r], rs, step.dst);
            if (step.kind == StepKind::kRecv)
              std::memcpy(dst, msg.data(), msg.size());
            else
              kernels::reduce(dst, addr(ranks[r], rs, step.src), msg.data(),
                              msg.size() / dataTypeSize(step.dtype), step.dtype, step.op);
            rs.recvHead[step.peer]++;
            break;
          }
          case StepKind::kCopy: {
            char* dst = addr(ranks[r], rs, step.dst);
            const char* src = addr(ranks[r], rs, step.src);
            if (dst != src) std::memmove(dst, src, step.dst.bytes);
            break;
          }
          case StepKind::kReduce:
            kernels::reduce(addr(ranks[r], rs, step.dst), addr(ranks[r], rs, step.dst),
                            addr(ranks[r], rs, step.src), step.dst.bytes / dataTypeSize(step.dtype),
                            step.dtype, step.op);
            break;
          case StepKind::kDivide:
            kernels::divideBy(addr(ranks[r], rs, step.dst), step.dst.bytes / dataTypeSize(step.dtype),
                              step.dtype, step.divisor);
            break;
        }
        rs.done[i] = 1;
        rs.finished++;
        progressed = true;
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    if (st[r].finished != ranks[r].schedule->steps.size())
      return internalError("deadlock: rank " + std::to_string(r) + " finished " +
                           std::to_string(st[r].finished) + " of " +
                           std::to_string(ranks[r].schedule->steps.size()) + " steps");
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (!fifo[a * n + b].empty())
        return internalError("rank " + std::to_string(a) + " sent " + std::to_string(fifo[a * n + b].size()) +
                             " message(s) to rank " + std::to_string(b) + " that were never received");
  return Status::ok();
}

}  // namespace braid::algo

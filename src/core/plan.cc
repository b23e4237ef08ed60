#include "core/plan.h"

#include <utility>

namespace braid::core {

using algo::StepId;
using algo::StepKind;

namespace {

bool isComm(StepKind k) { return k == StepKind::kSend || k == StepKind::kRecv || k == StepKind::kRecvReduce; }

// Fills begin/queue as CSR of the comm steps matching `wanted`, by peer.
void channelIndex(const algo::Schedule& s, int nranks, bool sends, std::vector<uint32_t>* begin,
                  std::vector<StepId>* queue) {
  begin->assign(static_cast<size_t>(nranks) + 1, 0);
  for (const algo::Step& st : s.steps)
    if (isComm(st.kind) && (st.kind == StepKind::kSend) == sends) (*begin)[st.peer + 1]++;
  for (int p = 0; p < nranks; ++p) (*begin)[p + 1] += (*begin)[p];
  queue->resize(begin->back());
  std::vector<uint32_t> fill(begin->begin(), begin->end() - 1);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const algo::Step& st = s.steps[i];
    if (isComm(st.kind) && (st.kind == StepKind::kSend) == sends)
      (*queue)[fill[st.peer]++] = static_cast<StepId>(i);
  }
}

}  // namespace

Status makePlan(algo::Schedule&& schedule, std::string algorithm, int nranks, int rank,
                std::shared_ptr<const Plan>* out) {
  auto plan = std::make_shared<Plan>();
  plan->algorithm = std::move(algorithm);
  plan->schedule = std::move(schedule);
  const algo::Schedule& s = plan->schedule;
  const size_t n = s.steps.size();
  for (size_t i = 0; i < n; ++i) {
    const algo::Step& st = s.steps[i];
    if (isComm(st.kind) && (st.peer < 0 || st.peer >= nranks || st.peer == rank))
      return internalError(plan->algorithm + " schedule step " + std::to_string(i) + " names peer " +
                           std::to_string(st.peer) + " (rank " + std::to_string(rank) + " of " +
                           std::to_string(nranks) + ")");
    if (static_cast<size_t>(st.depBegin) + st.depCount > s.deps.size())
      return internalError(plan->algorithm + " schedule step " + std::to_string(i) +
                           " has dependencies past the end");
    for (uint32_t k = 0; k < st.depCount; ++k)
      if (s.deps[st.depBegin + k] >= i)
        return internalError(plan->algorithm + " schedule step " + std::to_string(i) +
                             " depends on a later step");
    if (st.depCount == 0) plan->roots.push_back(static_cast<StepId>(i));
    if (st.kind == StepKind::kSend) plan->bytesMoved += st.src.bytes;
    if (st.kind == StepKind::kRecv || st.kind == StepKind::kRecvReduce) plan->bytesMoved += st.dst.bytes;
  }
  plan->dependentsBegin.assign(n + 1, 0);
  for (const algo::Step& st : s.steps)
    for (uint32_t k = 0; k < st.depCount; ++k) plan->dependentsBegin[s.deps[st.depBegin + k] + 1]++;
  for (size_t i = 0; i < n; ++i) plan->dependentsBegin[i + 1] += plan->dependentsBegin[i];
  plan->dependents.resize(plan->dependentsBegin.back());
  std::vector<uint32_t> fill(plan->dependentsBegin.begin(), plan->dependentsBegin.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    const algo::Step& st = s.steps[i];
    for (uint32_t k = 0; k < st.depCount; ++k)
      plan->dependents[fill[s.deps[st.depBegin + k]]++] = static_cast<StepId>(i);
  }
  channelIndex(s, nranks, true, &plan->sendBegin, &plan->sendQueue);
  channelIndex(s, nranks, false, &plan->recvBegin, &plan->recvQueue);
  *out = std::move(plan);
  return Status::ok();
}

}  // namespace braid::core

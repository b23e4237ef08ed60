#include "core/launch.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "base/hot_thread_local.h"
#include "core/device_staging.h"

namespace braid::core {
namespace {

struct Pending {
  std::shared_ptr<Communicator> comm;
  Stream* stream;
  Op op;
  std::shared_ptr<GroupStaging> staging;  // device buffers staged for this member
};

// Depth of braidGroupStart nesting, read by every call; the ops a group holds.
BRAID_HOT_THREAD_LOCAL int tlsGroupDepth = 0;
thread_local std::vector<Pending> tlsGroupPending;

Status runNow(const std::shared_ptr<Communicator>& comm, Stream* stream, Op&& op) {
  if (stream == nullptr) return comm->runInline(op);
  const uint64_t ticket = comm->takeTicket();
  stream->enqueue(comm, ticket, std::move(op));
  return Status::ok();
}

bool isSelf(const Op& op, int rank, algo::StepKind kind) {
  if (op.collective != algo::Collective::kSendRecv) return false;
  const algo::Schedule& s = op.plan->schedule;
  return s.steps.size() == 1 && s.steps[0].kind == kind && s.steps[0].peer == rank;
}

// Fuses the group's ops of one communicator (in call order) into one op.
Status fuse(std::vector<Pending*>& members, Op* fused) {
  const Communicator& comm = *members.front()->comm;
  const int rank = comm.rank();
  fused->collective = members.size() == 1 ? members.front()->op.collective : algo::Collective::kSendRecv;
  algo::Schedule schedule;
  std::deque<algo::Region> selfSends, selfRecvs;  // in call order, already shifted
  for (size_t k = 0; k < members.size(); ++k) {
    Op& op = members[k]->op;
    const int shift = static_cast<int>(fused->buffers.size());
    fused->buffers.append(op.buffers.view());
    if (isSelf(op, rank, algo::StepKind::kSend)) {
      algo::Region r = op.plan->schedule.steps[0].src;
      r.buffer += shift;
      selfSends.push_back(r);
    } else if (isSelf(op, rank, algo::StepKind::kRecv)) {
      algo::Region r = op.plan->schedule.steps[0].dst;
      r.buffer += shift;
      selfRecvs.push_back(r);
    } else {
      schedule.append(op.plan->schedule, shift);
    }
  }
  if (selfSends.size() != selfRecvs.size())
    return invalidUsage("braidGroupEnd: the group has " + std::to_string(selfSends.size()) +
                        " sends to self but " + std::to_string(selfRecvs.size()) + " receives from self");
  for (size_t i = 0; i < selfSends.size(); ++i) {
    if (selfSends[i].bytes != selfRecvs[i].bytes)
      return invalidArgument("braidGroupEnd: send to self #" + std::to_string(i) + " has " +
                             std::to_string(selfSends[i].bytes) + " bytes, the receive " +
                             std::to_string(selfRecvs[i].bytes));
    schedule.add(algo::copyStep(selfSends[i], selfRecvs[i]));
  }
  return comm.makeOwnPlan(std::move(schedule), "group", &fused->plan);
}

}  // namespace

bool inGroup() { return tlsGroupDepth > 0; }

void groupStart() { tlsGroupDepth++; }

Status launch(const std::shared_ptr<Communicator>& comm, Stream* stream, Op&& op,
              std::shared_ptr<GroupStaging> staging) {
  // `comm` is the handle's own reference, which stays while the call runs
  // (the C entry point pins the handle: api::CommPin), so an inline op needs
  // no reference of its own; a queued op's closure and a group take one.
  if (inGroup()) {
    tlsGroupPending.push_back({comm, stream, std::move(op), std::move(staging)});
    return Status::ok();
  }
  if (isSelf(op, comm->rank(), algo::StepKind::kSend) || isSelf(op, comm->rank(), algo::StepKind::kRecv))
    return invalidUsage("send to or receive from the own rank outside braidGroupStart/End would never complete");
  return runNow(comm, stream, std::move(op));
}

Status groupEnd() {
  if (tlsGroupDepth == 0) return invalidUsage("braidGroupEnd without braidGroupStart");
  if (--tlsGroupDepth > 0) return Status::ok();
  std::vector<Pending> pending = std::move(tlsGroupPending);
  tlsGroupPending.clear();

  // One fused launch per communicator, in the order communicators first appear.
  std::vector<Communicator*> order;
  for (Pending& p : pending)
    if (std::find(order.begin(), order.end(), p.comm.get()) == order.end()) order.push_back(p.comm.get());
  std::vector<std::pair<std::vector<Pending*>, Op>> launches;
  for (Communicator* c : order) {
    std::vector<Pending*> members;
    for (Pending& p : pending)
      if (p.comm.get() == c) members.push_back(&p);
    for (Pending* m : members)
      if (m->stream != members.front()->stream)
        return invalidUsage("braidGroupEnd: ops of one communicator in a group must use the same stream");
    Op fused;
    BRAID_RETURN_IF_ERROR(fuse(members, &fused));
    launches.emplace_back(std::move(members), std::move(fused));
  }
  // Everything validated: launch. The first failure is returned; later
  // communicators still run so that their peers are not left waiting.
  Status first;
  for (auto& [members, fused] : launches) {
    std::vector<std::shared_ptr<GroupStaging>> staged;
    for (Pending* p : members)
      if (p->staging) staged.push_back(p->staging);
    Stream* stream = members.front()->stream;
    Status s = !staged.empty() || (stream && stream->cudaOrder())
                   ? launchStagedGroup(members.front()->comm, stream, std::move(fused), staged)
                   : runNow(members.front()->comm, stream, std::move(fused));
    if (first.isOk() && !s.isOk()) first = s;
  }
  return first;
}

}  // namespace braid::core

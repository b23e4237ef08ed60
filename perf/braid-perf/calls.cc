#include "calls.h"

namespace braid::perf {

namespace {

// ---- Calls ------------------------------------------------------------------
braidResult_t callAllReduce(const CallArgs& a) {
  return braidAllReduce(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
}
braidResult_t callAllGather(const CallArgs& a) {
  return braidAllGather(a.send, a.recv, a.count, a.type, a.comm, a.stream);
}
braidResult_t callReduceScatter(const CallArgs& a) {
  return braidReduceScatter(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
}
braidResult_t callBroadcast(const CallArgs& a) {
  return braidBroadcast(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream);
}
braidResult_t callReduce(const CallArgs& a) {
  return braidReduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm, a.stream);
}
braidResult_t callAllToAll(const CallArgs& a) {
  return braidAllToAll(a.send, a.recv, a.count, a.type, a.comm, a.stream);
}
braidResult_t callGather(const CallArgs& a) {
  return braidGather(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream);
}
braidResult_t callScatter(const CallArgs& a) {
  return braidScatter(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream);
}
// A ring shift, as nccl-tests' sendrecv: send to the next rank, receive from
// the previous one, both in one group so neither waits for the other.
braidResult_t callSendRecv(const CallArgs& a) {
  braidResult_t rc = braidGroupStart();
  if (rc != braidSuccess) return rc;
  braidResult_t first = braidSend(a.send, a.count, a.type, (a.rank + 1) % a.nranks, a.comm, a.stream);
  rc = braidRecv(a.recv, a.count, a.type, (a.rank + a.nranks - 1) % a.nranks, a.comm, a.stream);
  if (first == braidSuccess) first = rc;
  rc = braidGroupEnd();  // always, to close the group
  return first != braidSuccess ? first : rc;
}

}  // namespace

braidResult_t callCollective(CollectiveKind kind, const CallArgs& a) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return callAllReduce(a);
    case CollectiveKind::kAllGather:
      return callAllGather(a);
    case CollectiveKind::kReduceScatter:
      return callReduceScatter(a);
    case CollectiveKind::kBroadcast:
      return callBroadcast(a);
    case CollectiveKind::kReduce:
      return callReduce(a);
    case CollectiveKind::kAllToAll:
      return callAllToAll(a);
    case CollectiveKind::kSendRecv:
      return callSendRecv(a);
    case CollectiveKind::kGather:
      return callGather(a);
    case CollectiveKind::kScatter:
      return callScatter(a);
  }
  return braidInternalError;
}

}  // namespace braid::perf

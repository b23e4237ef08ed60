// Work requests on the fake fabric. Posting only queues; the fabric moves
// queued sends when any CQ is polled, which models hardware that completes
// later than the post, so a caller that reuses a buffer before its
// completion reads or sends the wrong bytes.
#include "fake_fabric.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace braid::fake_verbs {
namespace {

enum class Outcome { kDone, kWaitForReceive };

bool covers(const MrRecord& mr, uint64_t addr, uint64_t length) {
  return addr >= mr.addr && length <= mr.length && addr - mr.addr <= mr.length - length;
}

bool isLocallyAccessible(Fabric& f, const QpRecord& qp, const ibv_sge& sge, bool mustBeWritable) {
  const MrRecord* mr = findMrByLkey(f, sge.lkey);
  if (!mr || mr->pdHandle != qp.pdHandle) return false;
  if (mustBeWritable && !(mr->access & IBV_ACCESS_LOCAL_WRITE)) return false;
  return covers(*mr, sge.addr, sge.length);
}

bool allLocallyAccessible(Fabric& f, const QpRecord& qp, const ibv_sge* sges, uint32_t count,
                          bool mustBeWritable) {
  for (uint32_t i = 0; i < count; ++i) {
    if (!isLocallyAccessible(f, qp, sges[i], mustBeWritable)) return false;
  }
  return true;
}

// Zero-length writes check no rkey, as the InfiniBand spec has it.
bool isRemotelyWritable(Fabric& f, const SendWork& work) {
  if (work.length == 0) return true;
  const MrRecord* mr = findMrByRkey(f, work.rkey);
  return mr && (mr->access & IBV_ACCESS_REMOTE_WRITE) && covers(*mr, work.remoteAddr, work.length);
}

// Memory of this process directly, of another through cross-memory attach;
// false when that fails (the owner is gone, or the range is not mapped).
bool readFrom(const Fabric& f, pid_t owner, void* to, uint64_t from, size_t length) {
  if (length == 0) return true;
  if (owner == f.self) {
    std::memcpy(to, reinterpret_cast<const void*>(from), length);
    return true;
  }
  iovec local{to, length};
  iovec remote{reinterpret_cast<void*>(from), length};
  return process_vm_readv(owner, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(length);
}

bool writeTo(const Fabric& f, pid_t owner, uint64_t to, const void* from, size_t length) {
  if (length == 0) return true;
  if (owner == f.self) {
    std::memcpy(reinterpret_cast<void*>(to), from, length);
    return true;
  }
  iovec local{const_cast<void*>(from), length};
  iovec remote{reinterpret_cast<void*>(to), length};
  return process_vm_writev(owner, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(length);
}

void pushCompletion(Fabric& f, uint32_t cqSlot, const ibv_wc& wc) {
  CqRecord& cq = f.shared->cqs[cqSlot];
  if (!cq.inUse) return;
  if (cq.completions.count >= cq.completions.capacity) {
    cq.overrun = 1;
    return;
  }
  ringPush(f, cq.completions, wc);
}

void completeSend(Fabric& f, QpRecord& sender, const SendWork& work, ibv_wc_status status) {
  if (status == IBV_WC_SUCCESS && !work.signaled) return;
  ibv_wc wc{};
  wc.wr_id = work.wrId;
  wc.status = status;
  wc.opcode = work.opcode == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
  wc.qp_num = sender.qpNum;
  pushCompletion(f, sender.sendCq, wc);
}

void failSend(Fabric& f, QpRecord& sender, const SendWork& work, ibv_wc_status status) {
  completeSend(f, sender, work, status);
  moveToError(f, sender);
}

void completeRecv(Fabric& f, QpRecord& receiver, const RecvWork& recv, ibv_wc_status status) {
  ibv_wc wc{};
  wc.wr_id = recv.wrId;
  wc.status = status;
  wc.qp_num = receiver.qpNum;
  pushCompletion(f, receiver.recvCq, wc);
}

void flushSends(Fabric& f, QpRecord& qp) {
  while (qp.sends.count > 0) completeSend(f, qp, ringPop<SendWork>(f, qp.sends), IBV_WC_WR_FLUSH_ERR);
}

void flushRecvs(Fabric& f, QpRecord& qp) {
  while (qp.recvs.count > 0) completeRecv(f, qp, ringPop<RecvWork>(f, qp.recvs), IBV_WC_WR_FLUSH_ERR);
}

// The sender's bytes, from whichever process owns each registered range.
bool gather(Fabric& f, const SendWork& work, std::vector<uint8_t>* bytes) {
  if (work.isInline) {
    bytes->assign(work.inlineData, work.inlineData + work.length);
    return true;
  }
  bytes->resize(work.length);
  size_t offset = 0;
  for (uint32_t i = 0; i < work.numSge; ++i) {
    const ibv_sge& sge = work.sges[i];
    const MrRecord* mr = findMrByLkey(f, sge.lkey);
    if (!mr || !readFrom(f, mr->owner, bytes->data() + offset, sge.addr, sge.length)) return false;
    offset += sge.length;
  }
  return true;
}

ibv_wc_status scatter(Fabric& f, const QpRecord& receiver, const RecvWork& recv,
                      const std::vector<uint8_t>& payload) {
  if (!allLocallyAccessible(f, receiver, recv.sges, recv.numSge, /*mustBeWritable=*/true))
    return IBV_WC_LOC_PROT_ERR;
  uint64_t room = 0;
  for (uint32_t i = 0; i < recv.numSge; ++i) room += recv.sges[i].length;
  if (payload.size() > room) return IBV_WC_LOC_LEN_ERR;
  size_t offset = 0;
  for (uint32_t i = 0; i < recv.numSge && offset < payload.size(); ++i) {
    const ibv_sge& sge = recv.sges[i];
    const size_t chunk = std::min<size_t>(sge.length, payload.size() - offset);
    const MrRecord* mr = findMrByLkey(f, sge.lkey);
    if (!writeTo(f, mr->owner, sge.addr, payload.data() + offset, chunk)) return IBV_WC_LOC_PROT_ERR;
    offset += chunk;
  }
  return IBV_WC_SUCCESS;
}

// The responder's error on a SEND that does not fit, as the requester sees it.
ibv_wc_status requesterStatus(ibv_wc_status responderStatus) {
  return responderStatus == IBV_WC_LOC_LEN_ERR ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_OP_ERR;
}

// Delivers the payload into the receiver's oldest posted recv.
void deliver(Fabric& f, QpRecord& sender, QpRecord& receiver, const SendWork& work,
             const std::vector<uint8_t>& payload) {
  const RecvWork recv = ringPop<RecvWork>(f, receiver.recvs);
  const bool withImm = work.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  const ibv_wc_status status = withImm ? IBV_WC_SUCCESS : scatter(f, receiver, recv, payload);
  if (status != IBV_WC_SUCCESS) {
    completeRecv(f, receiver, recv, status);
    failSend(f, sender, work, requesterStatus(status));
    moveToError(f, receiver);
    return;
  }
  ibv_wc wc{};
  wc.wr_id = recv.wrId;
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = withImm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
  wc.byte_len = static_cast<uint32_t>(payload.size());
  wc.qp_num = receiver.qpNum;
  wc.src_qp = sender.qpNum;
  wc.slid = kPortLid;
  if (withImm) {
    wc.imm_data = work.immData;
    wc.wc_flags = IBV_WC_WITH_IMM;
  }
  pushCompletion(f, receiver.recvCq, wc);
  completeSend(f, sender, work, IBV_WC_SUCCESS);
}

bool canReceive(const QpRecord* qp) { return qp && (qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS); }

Outcome execute(Fabric& f, QpRecord& sender, const SendWork& work) {
  if (work.length > kMaxMessageBytes) return failSend(f, sender, work, IBV_WC_LOC_LEN_ERR), Outcome::kDone;
  // Registration is checked again: the caller may have deregistered since posting.
  if (!allLocallyAccessible(f, sender, work.sges, work.numSge, /*mustBeWritable=*/false))
    return failSend(f, sender, work, IBV_WC_LOC_PROT_ERR), Outcome::kDone;
  QpRecord* receiver = findQp(f, sender.destQpNum);
  if (!canReceive(receiver)) return failSend(f, sender, work, IBV_WC_RETRY_EXC_ERR), Outcome::kDone;
  const bool isWrite = work.opcode != IBV_WR_SEND;
  if (isWrite && !isRemotelyWritable(f, work)) {
    failSend(f, sender, work, IBV_WC_REM_ACCESS_ERR);
    moveToError(f, *receiver);
    return Outcome::kDone;
  }
  const bool consumesRecv = work.opcode != IBV_WR_RDMA_WRITE;
  // Waiting models infinite RNR retry (rnr_retry = 7).
  if (consumesRecv && receiver->recvs.count == 0) return Outcome::kWaitForReceive;
  std::vector<uint8_t> payload;
  if (!gather(f, work, &payload)) return failSend(f, sender, work, IBV_WC_LOC_PROT_ERR), Outcome::kDone;
  if (isWrite && !payload.empty()) {
    const MrRecord* target = findMrByRkey(f, work.rkey);
    if (!writeTo(f, target->owner, work.remoteAddr, payload.data(), payload.size())) {
      failSend(f, sender, work, IBV_WC_REM_ACCESS_ERR);
      moveToError(f, *receiver);
      return Outcome::kDone;
    }
  }
  if (consumesRecv) {
    deliver(f, sender, *receiver, work, payload);
  } else {
    completeSend(f, sender, work, IBV_WC_SUCCESS);
  }
  return Outcome::kDone;
}

// A send waiting for a recv stays at the head of its queue: later sends of
// the same QP never overtake it.
void drainSends(Fabric& f, QpRecord& qp) {
  while (qp.state == IBV_QPS_RTS && qp.sends.count > 0) {
    // Taken off the queue first: executing it may flush this very queue.
    const SendWork work = ringPop<SendWork>(f, qp.sends);
    if (execute(f, qp, work) == Outcome::kWaitForReceive) {
      qp.sends.head = (qp.sends.head + qp.sends.capacity - 1) % qp.sends.capacity;
      ++qp.sends.count;
      ringAt<SendWork>(f, qp.sends, 0) = work;
      return;
    }
  }
}

// Sends never post recvs, so one pass moves everything that can move. The
// sends of a gone process went with it.
void advanceFabric(Fabric& f) {
  for (QpRecord& qp : f.shared->qps) {
    if (qp.inUse && qp.state == IBV_QPS_RTS && qp.sends.count > 0 && isAlive(f, qp.owner)) drainSends(f, qp);
  }
}

bool isSupportedOpcode(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_SEND || opcode == IBV_WR_RDMA_WRITE || opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

// Returns 0 or the errno that rejects the post.
int makeSendWork(Fabric& f, const QpRecord& qp, const ibv_send_wr& wr, SendWork* work) {
  if (!isSupportedOpcode(wr.opcode)) return EINVAL;
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > qp.cap.max_send_sge) return EINVAL;
  const uint32_t numSge = static_cast<uint32_t>(wr.num_sge);
  *work = {};
  work->wrId = wr.wr_id;
  work->opcode = wr.opcode;
  work->signaled = qp.signalAll || (wr.send_flags & IBV_SEND_SIGNALED);
  work->immData = wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? wr.imm_data : 0;
  work->remoteAddr = wr.wr.rdma.remote_addr;
  work->rkey = wr.wr.rdma.rkey;
  for (uint32_t i = 0; i < numSge; ++i) work->length += wr.sg_list[i].length;
  if (wr.send_flags & IBV_SEND_INLINE) {
    if (work->length > qp.cap.max_inline_data) return EINVAL;
    work->isInline = 1;
    size_t offset = 0;
    for (uint32_t i = 0; i < numSge; ++i) {
      std::memcpy(work->inlineData + offset, reinterpret_cast<const void*>(wr.sg_list[i].addr),
                  wr.sg_list[i].length);
      offset += wr.sg_list[i].length;
    }
    return 0;
  }
  if (!allLocallyAccessible(f, qp, wr.sg_list, numSge, /*mustBeWritable=*/false)) return EINVAL;
  work->numSge = numSge;
  std::copy_n(wr.sg_list, numSge, work->sges);
  return 0;
}

int makeRecvWork(Fabric& f, const QpRecord& qp, const ibv_recv_wr& wr, RecvWork* work) {
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > qp.cap.max_recv_sge) return EINVAL;
  *work = {};
  work->wrId = wr.wr_id;
  work->numSge = static_cast<uint32_t>(wr.num_sge);
  std::copy_n(wr.sg_list, work->numSge, work->sges);
  return allLocallyAccessible(f, qp, work->sges, work->numSge, /*mustBeWritable=*/true) ? 0 : EINVAL;
}

int postOneSend(Fabric& f, QpRecord& qp, const ibv_send_wr& wr) {
  if (qp.state != IBV_QPS_RTS) return EINVAL;
  SendWork work;
  if (int error = makeSendWork(f, qp, wr, &work)) return error;
  if (qp.sends.count >= qp.cap.max_send_wr) return ENOMEM;
  ringPush(f, qp.sends, work);
  return 0;
}

int postOneRecv(Fabric& f, QpRecord& qp, const ibv_recv_wr& wr) {
  if (qp.state == IBV_QPS_RESET) return EINVAL;
  RecvWork work;
  if (int error = makeRecvWork(f, qp, wr, &work)) return error;
  if (qp.state == IBV_QPS_ERR) return completeRecv(f, qp, work, IBV_WC_WR_FLUSH_ERR), 0;
  if (qp.recvs.count >= qp.cap.max_recv_wr) return ENOMEM;
  ringPush(f, qp.recvs, work);
  return 0;
}

// Posts a chain of work requests; the ones before a rejected one stay posted.
template <typename Wr, typename PostOne>
int postChain(ibv_qp* verbs, Wr* wr, Wr** badWr, PostOne postOne) {
  Lock lock;
  Fabric& f = lock.fabric();
  QpRecord& qp = f.shared->qps[fake<FakeQp>(verbs)->slot];
  for (; wr; wr = wr->next) {
    if (int error = postOne(f, qp, *wr)) {
      *badWr = wr;
      return error;
    }
  }
  return 0;
}

}  // namespace

void moveToError(Fabric& f, QpRecord& qp) {
  qp.state = IBV_QPS_ERR;
  flushSends(f, qp);
  flushRecvs(f, qp);
}

void moveToReset(QpRecord& qp) {
  qp.state = IBV_QPS_RESET;
  qp.sends.head = qp.sends.count = 0;
  qp.recvs.head = qp.recvs.count = 0;
}

int pollCq(ibv_cq* verbsCq, int capacity, ibv_wc* out) {
  Lock lock;
  Fabric& f = lock.fabric();
  advanceFabric(f);
  CqRecord& cq = f.shared->cqs[fake<FakeCq>(verbsCq)->slot];
  if (cq.overrun) return -1;
  int polled = 0;
  for (; polled < capacity && cq.completions.count > 0; ++polled)
    out[polled] = ringPop<ibv_wc>(f, cq.completions);
  return polled;
}

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr) {
  return postChain(qp, wr, badWr, postOneSend);
}

int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr) {
  return postChain(qp, wr, badWr, postOneRecv);
}

}  // namespace braid::fake_verbs

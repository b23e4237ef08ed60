// Work requests on the fake fabric. Posting only queues; the fabric moves
// queued sends when any CQ is polled, which models hardware that completes
// later than the post, so a caller that reuses a buffer before its
// completion reads or sends the wrong bytes.
#include "fake_fabric.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace braid::fake_verbs {
namespace {

enum class Outcome { kDone, kWaitForReceive };

bool covers(const ibv_mr& mr, uint64_t addr, uint64_t length) {
  const uint64_t begin = reinterpret_cast<uintptr_t>(mr.addr);
  return addr >= begin && length <= mr.length && addr - begin <= mr.length - length;
}

bool isLocallyAccessible(const FakeQp& qp, const ibv_sge& sge, bool mustBeWritable) {
  auto found = fabric().mrsByLkey.find(sge.lkey);
  if (found == fabric().mrsByLkey.end()) return false;
  const FakeMr& mr = *found->second;
  if (mr.mr.pd != qp.qp.pd) return false;
  if (mustBeWritable && !(mr.access & IBV_ACCESS_LOCAL_WRITE)) return false;
  return covers(mr.mr, sge.addr, sge.length);
}

bool allLocallyAccessible(const FakeQp& qp, const std::vector<ibv_sge>& sges, bool mustBeWritable) {
  for (const ibv_sge& sge : sges) {
    if (!isLocallyAccessible(qp, sge, mustBeWritable)) return false;
  }
  return true;
}

// Zero-length writes check no rkey, as the InfiniBand spec has it.
bool isRemotelyWritable(const SendWork& work) {
  if (work.length == 0) return true;
  auto found = fabric().mrsByRkey.find(work.rkey);
  if (found == fabric().mrsByRkey.end()) return false;
  const FakeMr& mr = *found->second;
  return (mr.access & IBV_ACCESS_REMOTE_WRITE) && covers(mr.mr, work.remoteAddr, work.length);
}

void pushCompletion(ibv_cq* verbsCq, const ibv_wc& wc) {
  FakeCq& cq = *fake<FakeCq>(verbsCq);
  if (cq.completions.size() >= static_cast<size_t>(cq.cq.cqe)) {
    cq.overrun = true;
    return;
  }
  cq.completions.push_back(wc);
}

void completeSend(FakeQp& sender, const SendWork& work, ibv_wc_status status) {
  if (status == IBV_WC_SUCCESS && !work.signaled) return;
  ibv_wc wc{};
  wc.wr_id = work.wrId;
  wc.status = status;
  wc.opcode = work.opcode == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
  wc.qp_num = sender.qp.qp_num;
  pushCompletion(sender.qp.send_cq, wc);
}

void failSend(FakeQp& sender, const SendWork& work, ibv_wc_status status) {
  completeSend(sender, work, status);
  moveToError(sender);
}

void completeRecv(FakeQp& receiver, const RecvWork& recv, ibv_wc_status status) {
  ibv_wc wc{};
  wc.wr_id = recv.wrId;
  wc.status = status;
  wc.qp_num = receiver.qp.qp_num;
  pushCompletion(receiver.qp.recv_cq, wc);
}

void flushSends(FakeQp& qp) {
  for (const SendWork& work : qp.sends) completeSend(qp, work, IBV_WC_WR_FLUSH_ERR);
  qp.sends.clear();
}

void flushRecvs(FakeQp& qp) {
  for (const RecvWork& recv : qp.recvs) completeRecv(qp, recv, IBV_WC_WR_FLUSH_ERR);
  qp.recvs.clear();
}

std::vector<uint8_t> gather(const std::vector<ibv_sge>& sges, uint64_t length) {
  std::vector<uint8_t> bytes;
  bytes.reserve(length);
  for (const ibv_sge& sge : sges) {
    const uint8_t* data = reinterpret_cast<const uint8_t*>(sge.addr);
    bytes.insert(bytes.end(), data, data + sge.length);
  }
  return bytes;
}

ibv_wc_status scatter(const FakeQp& receiver, const RecvWork& recv, const std::vector<uint8_t>& payload) {
  if (!allLocallyAccessible(receiver, recv.sges, /*mustBeWritable=*/true)) return IBV_WC_LOC_PROT_ERR;
  uint64_t room = 0;
  for (const ibv_sge& sge : recv.sges) room += sge.length;
  if (payload.size() > room) return IBV_WC_LOC_LEN_ERR;
  size_t offset = 0;
  for (const ibv_sge& sge : recv.sges) {
    const size_t chunk = std::min<size_t>(sge.length, payload.size() - offset);
    std::copy_n(payload.data() + offset, chunk, reinterpret_cast<uint8_t*>(sge.addr));
    offset += chunk;
  }
  return IBV_WC_SUCCESS;
}

// The responder's error on a SEND that does not fit, as the requester sees it.
ibv_wc_status requesterStatus(ibv_wc_status responderStatus) {
  return responderStatus == IBV_WC_LOC_LEN_ERR ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_OP_ERR;
}

// Delivers the payload into the receiver's oldest posted recv.
void deliver(FakeQp& sender, FakeQp& receiver, const SendWork& work, const std::vector<uint8_t>& payload) {
  const RecvWork recv = receiver.recvs.front();
  receiver.recvs.pop_front();
  const bool withImm = work.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  const ibv_wc_status status = withImm ? IBV_WC_SUCCESS : scatter(receiver, recv, payload);
  if (status != IBV_WC_SUCCESS) {
    completeRecv(receiver, recv, status);
    failSend(sender, work, requesterStatus(status));
    moveToError(receiver);
    return;
  }
  ibv_wc wc{};
  wc.wr_id = recv.wrId;
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = withImm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
  wc.byte_len = static_cast<uint32_t>(payload.size());
  wc.qp_num = receiver.qp.qp_num;
  wc.src_qp = sender.qp.qp_num;
  wc.slid = kPortLid;
  if (withImm) {
    wc.imm_data = work.immData;
    wc.wc_flags = IBV_WC_WITH_IMM;
  }
  pushCompletion(receiver.qp.recv_cq, wc);
  completeSend(sender, work, IBV_WC_SUCCESS);
}

bool canReceive(const FakeQp* qp) {
  return qp && (qp->qp.state == IBV_QPS_RTR || qp->qp.state == IBV_QPS_RTS);
}

Outcome execute(FakeQp& sender, const SendWork& work) {
  if (work.length > kMaxMessageBytes) return failSend(sender, work, IBV_WC_LOC_LEN_ERR), Outcome::kDone;
  // Registration is checked again: the caller may have deregistered since posting.
  if (!allLocallyAccessible(sender, work.sges, /*mustBeWritable=*/false))
    return failSend(sender, work, IBV_WC_LOC_PROT_ERR), Outcome::kDone;
  FakeQp* receiver = findQp(sender.destQpNum);
  if (!canReceive(receiver)) return failSend(sender, work, IBV_WC_RETRY_EXC_ERR), Outcome::kDone;
  const bool isWrite = work.opcode != IBV_WR_SEND;
  if (isWrite && !isRemotelyWritable(work)) {
    failSend(sender, work, IBV_WC_REM_ACCESS_ERR);
    moveToError(*receiver);
    return Outcome::kDone;
  }
  const bool consumesRecv = work.opcode != IBV_WR_RDMA_WRITE;
  // Waiting models infinite RNR retry (rnr_retry = 7).
  if (consumesRecv && receiver->recvs.empty()) return Outcome::kWaitForReceive;
  const std::vector<uint8_t> payload = work.sges.empty() ? work.inlineData : gather(work.sges, work.length);
  if (isWrite && !payload.empty())
    std::memcpy(reinterpret_cast<void*>(work.remoteAddr), payload.data(), payload.size());
  if (consumesRecv) {
    deliver(sender, *receiver, work, payload);
  } else {
    completeSend(sender, work, IBV_WC_SUCCESS);
  }
  return Outcome::kDone;
}

// A send waiting for a recv stays at the head of its queue: later sends of
// the same QP never overtake it.
void drainSends(FakeQp& qp) {
  while (qp.qp.state == IBV_QPS_RTS && !qp.sends.empty()) {
    // Taken off the queue first: executing it may flush this very queue.
    SendWork work = std::move(qp.sends.front());
    qp.sends.pop_front();
    if (execute(qp, work) == Outcome::kWaitForReceive) {
      qp.sends.push_front(std::move(work));
      return;
    }
  }
}

// Sends never post recvs, so one pass moves everything that can move.
void advanceFabric() {
  for (auto& [qpNum, qp] : fabric().qpsByNum) drainSends(*qp);
}

bool isSupportedOpcode(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_SEND || opcode == IBV_WR_RDMA_WRITE || opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

std::vector<ibv_sge> copySges(const ibv_sge* list, int count) {
  return count > 0 ? std::vector<ibv_sge>(list, list + count) : std::vector<ibv_sge>{};
}

uint64_t totalLength(const std::vector<ibv_sge>& sges) {
  uint64_t total = 0;
  for (const ibv_sge& sge : sges) total += sge.length;
  return total;
}

// Returns 0 or the errno that rejects the post.
int makeSendWork(const FakeQp& qp, const ibv_send_wr& wr, SendWork* work) {
  if (!isSupportedOpcode(wr.opcode)) return EINVAL;
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > qp.cap.max_send_sge) return EINVAL;
  std::vector<ibv_sge> sges = copySges(wr.sg_list, wr.num_sge);
  work->wrId = wr.wr_id;
  work->opcode = wr.opcode;
  work->signaled = qp.signalAll || (wr.send_flags & IBV_SEND_SIGNALED);
  work->immData = wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? wr.imm_data : 0;
  work->remoteAddr = wr.wr.rdma.remote_addr;
  work->rkey = wr.wr.rdma.rkey;
  work->length = totalLength(sges);
  if (wr.send_flags & IBV_SEND_INLINE) {
    if (work->length > qp.cap.max_inline_data) return EINVAL;
    work->inlineData = gather(sges, work->length);
    return 0;
  }
  if (!allLocallyAccessible(qp, sges, /*mustBeWritable=*/false)) return EINVAL;
  work->sges = std::move(sges);
  return 0;
}

int makeRecvWork(const FakeQp& qp, const ibv_recv_wr& wr, RecvWork* work) {
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > qp.cap.max_recv_sge) return EINVAL;
  work->wrId = wr.wr_id;
  work->sges = copySges(wr.sg_list, wr.num_sge);
  return allLocallyAccessible(qp, work->sges, /*mustBeWritable=*/true) ? 0 : EINVAL;
}

int postOneSend(FakeQp& qp, const ibv_send_wr& wr) {
  if (qp.qp.state != IBV_QPS_RTS) return EINVAL;
  SendWork work;
  if (int error = makeSendWork(qp, wr, &work)) return error;
  if (qp.sends.size() >= qp.cap.max_send_wr) return ENOMEM;
  qp.sends.push_back(std::move(work));
  return 0;
}

int postOneRecv(FakeQp& qp, const ibv_recv_wr& wr) {
  if (qp.qp.state == IBV_QPS_RESET) return EINVAL;
  RecvWork work;
  if (int error = makeRecvWork(qp, wr, &work)) return error;
  if (qp.qp.state == IBV_QPS_ERR) return completeRecv(qp, work, IBV_WC_WR_FLUSH_ERR), 0;
  if (qp.recvs.size() >= qp.cap.max_recv_wr) return ENOMEM;
  qp.recvs.push_back(std::move(work));
  return 0;
}

// Posts a chain of work requests; the ones before a rejected one stay posted.
template <typename Wr, typename PostOne>
int postChain(FakeQp& qp, Wr* wr, Wr** badWr, PostOne postOne) {
  std::lock_guard lock(fabric().mutex);
  for (; wr; wr = wr->next) {
    if (int error = postOne(qp, *wr)) {
      *badWr = wr;
      return error;
    }
  }
  return 0;
}

}  // namespace

Fabric& fabric() {
  static Fabric instance;
  return instance;
}

FakeQp* findQp(uint32_t qpNum) {
  auto found = fabric().qpsByNum.find(qpNum);
  return found == fabric().qpsByNum.end() ? nullptr : found->second;
}

void moveToError(FakeQp& qp) {
  qp.qp.state = IBV_QPS_ERR;
  flushSends(qp);
  flushRecvs(qp);
}

void moveToReset(FakeQp& qp) {
  qp.qp.state = IBV_QPS_RESET;
  qp.sends.clear();
  qp.recvs.clear();
}

int pollCq(ibv_cq* verbsCq, int capacity, ibv_wc* out) {
  std::lock_guard lock(fabric().mutex);
  advanceFabric();
  FakeCq& cq = *fake<FakeCq>(verbsCq);
  if (cq.overrun) return -1;
  int polled = 0;
  for (; polled < capacity && !cq.completions.empty(); ++polled) {
    out[polled] = cq.completions.front();
    cq.completions.pop_front();
  }
  return polled;
}

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr) {
  return postChain(*fake<FakeQp>(qp), wr, badWr, postOneSend);
}

int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr) {
  return postChain(*fake<FakeQp>(qp), wr, badWr, postOneRecv);
}

}  // namespace braid::fake_verbs

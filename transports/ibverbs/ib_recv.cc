// The receiving half of ib_wire.h's protocol: a clear-to-send for each
// receive, in order, while the sender can take one; a receive completes when
// the sender's write with immediate lands.
#include <algorithm>

#include "transports/ibverbs/ib_comm.h"

namespace braid::ibverbs {

Status IbRecvComm::irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) {
  *req = nullptr;
  if (!failed_.isOk()) return failed_;
  if (capacity > 0 && data == nullptr) return invalidArgument("ibverbs irecv: null buffer");
  const size_t bytes = std::min<size_t>(capacity, kMaxMessageBytes);
  ibv_mr* registered = nullptr;
  BRAID_RETURN_IF_ERROR(registrationFor(data, bytes, mhandle, true, &registered));
  IbRequest* r = newRequest(tag, data, bytes);
  r->mr = registered;
  *req = r;
  (void)progress();  // an error fails the request at test()
  return Status::ok();
}

Status IbRecvComm::advance() {
  for (IbRequest* r : requests_) {
    if (r->announced) continue;
    if (credits_ == 0 || !qp_->canSendCtrl()) return Status::ok();
    CtrlMsg cts;
    cts.kind = CtrlKind::kClearToSend;
    cts.seq = r->seq;
    cts.tag = r->tag;
    cts.size = r->size;
    if (r->size <= kBounceBytes) {
      cts.addr = reinterpret_cast<uint64_t>(qp_->bounce(r->seq));
      cts.rkey = qp_->rkey();
    } else {
      BRAID_RETURN_IF_ERROR(registerForMessage(r, true));
      cts.addr = reinterpret_cast<uint64_t>(r->data);
      cts.rkey = r->mr->rkey;
    }
    BRAID_RETURN_IF_ERROR(qp_->sendCtrl(cts));
    r->announced = true;
    --credits_;
  }
  return Status::ok();
}

Status IbRecvComm::refused(const CtrlMsg& msg) {
  const std::string where = "from peer " + peer_ + " (receive #" + std::to_string(msg.seq) + ")";
  const IbRequest* r = firstWhere([&](const IbRequest& x) { return x.seq == msg.seq; });
  if (r == nullptr)
    return internalError("ibverbs: peer " + peer_ + " refused message " + std::to_string(msg.seq) +
                         ", which is not posted");
  if (msg.refusal == Refusal::kTagMismatch)
    return remoteError("tag mismatch " + where + ": expected tag " + std::to_string(r->tag) + ", got tag " +
                       std::to_string(msg.tag) + " (" + std::to_string(msg.size) +
                       " bytes); the peer is probably running a different operation");
  return remoteError("message too large " + where + ": expected at most " + std::to_string(r->size) +
                     " bytes, got " + std::to_string(msg.size) + " bytes (tag " + std::to_string(msg.tag) +
                     ")");
}

Status IbRecvComm::onCompletion(const ibv_wc& wc) {
  switch (workOf(wc.wr_id)) {
    case Work::kCtrlRecv: {
      const uint32_t slot = static_cast<uint32_t>(valueOf(wc.wr_id));
      if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
        const size_t size = be32toh(wc.imm_data);
        IbRequest* r = firstWhere([](const IbRequest& x) { return !x.done; });
        if (r == nullptr || !r->announced || size > r->size)
          return internalError("ibverbs: peer " + peer_ + " wrote " + std::to_string(size) +
                               " bytes no receive asked for");
        if (r->size <= kBounceBytes) std::copy_n(qp_->bounce(r->seq), size, r->data);
        finish(r, size);
        ++credits_;
        return qp_->repost(slot);
      }
      const CtrlMsg msg = qp_->received(slot);
      BRAID_RETURN_IF_ERROR(qp_->repost(slot));
      if (msg.kind == CtrlKind::kClose) return closedByPeer("it closed the connection");
      if (msg.kind == CtrlKind::kRefused) return refused(msg);
      return internalError("ibverbs: peer " + peer_ + " sent a receiver a control message of kind " +
                           std::to_string(static_cast<uint32_t>(msg.kind)));
    }
    case Work::kCtrlSend:
      qp_->ctrlSent();
      return Status::ok();
    case Work::kWrite:
      break;
  }
  return internalError("ibverbs: a completion of unknown work " + std::to_string(wc.wr_id));
}

}  // namespace braid::ibverbs

// The sending half of ib_wire.h's protocol: match each send, in order, with
// the receiver's next clear-to-send, check it, and write the data there.
#include <algorithm>

#include "transports/ibverbs/ib_comm.h"

namespace braid::ibverbs {

Status IbSendComm::isend(const void* data, size_t size, uint32_t tag, void* mhandle,
                         transport::Request** req) {
  *req = nullptr;
  if (!failed_.isOk()) return failed_;
  if (size > 0 && data == nullptr) return invalidArgument("ibverbs isend: null buffer");
  if (size > kMaxMessageBytes)
    return invalidArgument("ibverbs isend: " + std::to_string(size) + " bytes; at most " +
                           std::to_string(kMaxMessageBytes) + " bytes a message");
  const size_t bytes = size;
  ibv_mr* registered = nullptr;
  BRAID_RETURN_IF_ERROR(registrationFor(data, bytes, mhandle, false, &registered));
  IbRequest* r = newRequest(tag, const_cast<void*>(data), bytes);
  r->mr = registered;
  *req = r;
  (void)progress();  // an error fails the request at test()
  return Status::ok();
}

bool IbSendComm::bounceFree(const IbRequest& r) const {
  if (r.seq < kDepth) return true;
  const IbRequest* before = firstWhere([&](const IbRequest& x) { return x.seq == r.seq - kDepth; });
  return before == nullptr || before->done;
}

Status IbSendComm::match(IbRequest* r, const CtrlMsg& cts) {
  if (cts.seq != r->seq)
    return internalError("ibverbs: out of step with peer " + peer_ + ": clear-to-send for message " +
                         std::to_string(cts.seq) + " when message " + std::to_string(r->seq) + " is next");
  Refusal refusal = Refusal::kNone;
  if (cts.tag != r->tag)
    refusal = Refusal::kTagMismatch;
  else if (r->size > cts.size)
    refusal = Refusal::kTooLarge;
  if (refusal != Refusal::kNone) {
    CtrlMsg no;
    no.kind = CtrlKind::kRefused;
    no.refusal = refusal;
    no.seq = r->seq;
    no.tag = r->tag;
    no.size = r->size;
    if (qp_->canSendCtrl()) (void)qp_->sendCtrl(no);  // best effort: this end fails either way
    return remoteError("peer " + peer_ + " refused send #" + std::to_string(r->seq) + " (tag " +
                       std::to_string(r->tag) + ", " + std::to_string(r->size) +
                       " bytes): its receive expects tag " + std::to_string(cts.tag) + " and at most " +
                       std::to_string(cts.size) + " bytes");
  }
  r->announced = true;
  r->remote = cts.addr;
  r->rkey = cts.rkey;
  return Status::ok();
}

Status IbSendComm::writeSome(IbRequest* r) {
  const bool bounced = r->size <= kBounceBytes;
  const uint8_t* source = r->data;
  uint32_t lkey = qp_->lkey();
  if (bounced) {
    if (r->written == 0 && !r->posted) {
      if (!bounceFree(*r)) return Status::ok();
      std::copy(r->data, r->data + r->size, qp_->bounce(r->seq));
    }
    source = qp_->bounce(r->seq);
  } else {
    BRAID_RETURN_IF_ERROR(registerForMessage(r, false));
    lkey = r->mr->lkey;
  }
  while (!r->posted && qp_->canWrite()) {
    const size_t piece = std::min(qp_->maxWriteBytes(), r->size - r->written);
    const bool last = r->written + piece == r->size;
    const uint64_t wrId = workId(Work::kWrite, r->seq) | (last ? kLastPiece : 0);
    BRAID_RETURN_IF_ERROR(qp_->write(wrId, source + r->written, lkey, piece, r->remote + r->written, r->rkey,
                                     last, static_cast<uint32_t>(r->size)));
    r->written += piece;
    r->posted = last;
  }
  return Status::ok();
}

Status IbSendComm::advance() {
  for (IbRequest* r : requests_) {
    if (r->posted) continue;
    if (!r->announced) {
      if (clearToSend_.empty()) return Status::ok();
      const CtrlMsg cts = clearToSend_.front();
      clearToSend_.pop_front();
      BRAID_RETURN_IF_ERROR(match(r, cts));
    }
    BRAID_RETURN_IF_ERROR(writeSome(r));
    if (!r->posted) return Status::ok();  // later messages wait their turn
  }
  return Status::ok();
}

Status IbSendComm::onCompletion(const ibv_wc& wc) {
  switch (workOf(wc.wr_id)) {
    case Work::kCtrlRecv: {
      const uint32_t slot = static_cast<uint32_t>(valueOf(wc.wr_id));
      const CtrlMsg msg = qp_->received(slot);
      BRAID_RETURN_IF_ERROR(qp_->repost(slot));
      if (msg.kind == CtrlKind::kClose) return closedByPeer("it closed the connection");
      if (msg.kind != CtrlKind::kClearToSend || wc.opcode != IBV_WC_RECV)
        return internalError("ibverbs: peer " + peer_ + " sent a sender a control message of kind " +
                             std::to_string(static_cast<uint32_t>(msg.kind)));
      clearToSend_.push_back(msg);
      return Status::ok();
    }
    case Work::kCtrlSend:
      qp_->ctrlSent();
      return Status::ok();
    case Work::kWrite: {
      qp_->writeDone();
      if ((wc.wr_id & kLastPiece) == 0) return Status::ok();
      const uint64_t seq = valueOf(wc.wr_id);
      IbRequest* r = firstWhere([](const IbRequest& x) { return !x.done; });
      if (r == nullptr || r->seq != seq)
        return internalError("ibverbs: write of message " + std::to_string(seq) + " completed out of order");
      finish(r, r->size);
      return Status::ok();
    }
  }
  return internalError("ibverbs: a completion of unknown work " + std::to_string(wc.wr_id));
}

}  // namespace braid::ibverbs

#include "transports/ucx/ucx_comm.h"

#include <algorithm>

#include "base/deadline.h"
#include "base/log.h"
#include "transports/ucx/ucx_wire.h"

namespace braid::ucx {
namespace {

// How long a closing comm waits for its cancelled receives to end.
constexpr int kCancelMs = 5000;

}  // namespace

UcxRequest* UcxComm::take() {
  if (free_ == nullptr) {
    all_.push_back(std::make_unique<UcxRequest>());
    free_ = all_.back().get();
  }
  UcxRequest* r = free_;
  free_ = r->next;
  r->ucp = nullptr, r->finished = false, r->error = Status::ok();
  r->size = 0, r->capacity = 0, r->tag = 0, r->info = {}, r->next = nullptr;
  r->comm = this;
  inflight_.push_back(r);
  return r;
}

void UcxComm::retire(UcxRequest* r) {
  inflight_.erase(std::find(inflight_.begin(), inflight_.end(), r));
  r->next = free_;
  free_ = r;
}

Status UcxComm::test(UcxRequest* r, bool* done, size_t* size) {
  *done = false;
  endpoint_->worker().progress();
  bool earlierPending = false;
  for (UcxRequest* q : inflight_) {
    if (!q->finished) poll(q);
    if (q == r) break;
    earlierPending |= !q->finished;
  }
  if (!r->finished) {
    stalled();
    if (!r->finished) return Status::ok();
  }
  // A failure completes its request at once; success waits for the
  // requests posted before it.
  if (!r->error.isOk()) {
    Status error = r->error;
    retire(r);
    return error;
  }
  if (earlierPending) return Status::ok();
  *done = true;
  *size = r->size;
  retire(r);
  return Status::ok();
}

void UcxComm::endAll(bool receiving) {
  const UcpApi& api = endpoint_->worker().api();
  ucp_worker_h worker = endpoint_->worker().worker();
  std::shared_ptr<UcxWorker> keep = endpoint_->sharedWorker();  // outlives the endpoint below
  if (receiving) {
    // The endpoint first: a forced close ends the receives it serves
    // (rendezvous transfers under way, which cancelling cannot stop); a
    // receiving end sent nothing since its handshake, so nothing to flush.
    endpoint_->closeForcibly();
    for (UcxRequest* q : inflight_)
      if (q->ucp != nullptr) api.requestCancel(worker, q->ucp);  // still unmatched: posted on the worker
    Deadline deadline(kCancelMs);
    auto pending = [&] {
      return std::any_of(inflight_.begin(), inflight_.end(), [&](UcxRequest* q) {
        return q->ucp && api.requestCheckStatus(q->ucp) == UCS_INPROGRESS;
      });
    };
    while (pending() && !deadline.expired()) keep->progress();
    if (pending())
      BRAID_WARN("ucx: receives from %s did not end within %d ms", endpoint_->peer().c_str(), kCancelMs);
  }
  endpoint_.reset();  // a sending end flushes (UcxWorker::retire), then closes
  for (UcxRequest* q : inflight_)
    if (q->ucp != nullptr) api.requestFree(q->ucp);  // released now, or by UCX once it ends
  inflight_.clear();
}

UcxSendComm::~UcxSendComm() { endAll(false); }

Status UcxSendComm::isend(const void* data, size_t size, uint32_t tag, void*, transport::Request** req) {
  *req = nullptr;
  if (!dead_.isOk()) return dead_;
  BRAID_RETURN_IF_ERROR(endpoint_->failure());
  UcxWorker& w = endpoint_->worker();
  ucp_request_param_t param{};
  ucs_status_ptr_t ptr = w.api().tagSendNbx(endpoint_->ep(), data, size, wireTag(key_, tag), &param);
  if (UCS_PTR_IS_ERR(ptr)) {
    Status broken = endpoint_->failure();
    dead_ =
        broken.isOk()
            ? remoteError("ucx: send to " + endpoint_->peer() + " failed: " + w.describe(UCS_PTR_STATUS(ptr)))
            : broken;
    return dead_;
  }
  UcxRequest* r = take();
  r->ucp = ptr;  // null: already done
  r->finished = ptr == nullptr;
  r->size = size;
  r->tag = tag;
  *req = r;
  return Status::ok();
}

void UcxSendComm::poll(UcxRequest* r) {
  const UcpApi& api = endpoint_->worker().api();
  ucs_status_t st = api.requestCheckStatus(r->ucp);
  if (st == UCS_INPROGRESS) return;
  api.requestFree(r->ucp);
  r->ucp = nullptr;
  r->finished = true;
  if (st != UCS_OK) {
    Status broken = endpoint_->failure();
    r->error = broken.isOk() ? remoteError("ucx: send to " + endpoint_->peer() +
                                           " failed: " + endpoint_->worker().describe(st))
                             : broken;
    dead_ = r->error;
  }
}

UcxRecvComm::~UcxRecvComm() {
  endAll(true);
  if (release_) release_(key_);
}

Status UcxRecvComm::irecv(void* data, size_t capacity, uint32_t tag, void*, transport::Request** req) {
  *req = nullptr;
  if (!dead_.isOk()) return dead_;
  UcxWorker& w = endpoint_->worker();
  UcxRequest* r = take();
  r->capacity = capacity;
  r->tag = tag;
  ucp_request_param_t param{};
  // Always a request, whose test reports the sender's tag and length: UCX
  // 1.13 completes a zero-byte receive at once without filling recv_info.
  param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  ucs_status_ptr_t ptr = w.api().tagRecvNbx(w.worker(), data, capacity, wireTag(key_, 0), kKeyMask, &param);
  if (ptr == nullptr)
    judge(r, UCS_OK);
  else if (UCS_PTR_IS_ERR(ptr))
    judge(r, UCS_PTR_STATUS(ptr));
  else
    r->ucp = ptr;
  *req = r;
  return Status::ok();
}

void UcxRecvComm::poll(UcxRequest* r) {
  const UcpApi& api = endpoint_->worker().api();
  ucs_status_t st = api.tagRecvRequestTest(r->ucp, &r->info);
  if (st == UCS_INPROGRESS) return;
  api.requestFree(r->ucp);
  r->ucp = nullptr;
  judge(r, st);
}

void UcxRecvComm::judge(UcxRequest* r, ucs_status_t st) {
  r->finished = true;
  const std::string where = "from peer " + endpoint_->peer();
  if (st == UCS_OK) {
    const uint32_t got = braidTagOf(r->info.sender_tag);
    if (got == r->tag) {
      r->size = r->info.length;
      return;
    }
    r->error = remoteError("tag mismatch " + where + ": expected tag " + std::to_string(r->tag) +
                           ", got tag " + std::to_string(got));
  } else if (st == UCS_ERR_MESSAGE_TRUNCATED) {
    r->error = remoteError("message too large " + where + ": expected at most " +
                           std::to_string(r->capacity) + " bytes, got more");
  } else {
    Status broken = endpoint_->failure();
    r->error = broken.isOk()
                   ? remoteError("ucx: receive " + where + " failed: " + endpoint_->worker().describe(st))
                   : broken;
  }
  // Like a TCP stream out of step, the connection is not trusted again.
  dead_ = r->error;
}

// The sending end is gone: nothing more can arrive for this key, and what had
// arrived was matched already. Cancelled receives end with the failure.
void UcxRecvComm::stalled() {
  if (endpoint_->failure().isOk()) return;
  const UcpApi& api = endpoint_->worker().api();
  for (UcxRequest* q : inflight_)
    if (q->ucp != nullptr) api.requestCancel(endpoint_->worker().worker(), q->ucp);
  endpoint_->worker().progress();
  for (UcxRequest* q : inflight_)
    if (!q->finished) poll(q);
}

}  // namespace braid::ucx

#include "transports/ucx/ucx_stream_channel.h"

#include <cstring>

namespace braid::ucx {

StreamChannel::~StreamChannel() {
  // Past the endpoint's close every operation has ended; a request object
  // UCX still holds goes back to it.
  for (Direction* d : {&out_, &in_})
    if (d->request != nullptr) worker_->api().requestFree(d->request);
}

Status StreamChannel::settle(Direction& d, const char* what, bool* finished) {
  *finished = false;
  UcxWorker& w = endpoint_->worker();
  w.progress();
  ucs_status_t st = w.api().requestCheckStatus(d.request);
  if (st == UCS_INPROGRESS) {
    BRAID_RETURN_IF_ERROR(endpoint_->failure());
    return Status::ok();
  }
  w.api().requestFree(d.request);
  d.request = nullptr;
  if (st != UCS_OK) {
    Status broken = endpoint_->failure();
    if (!broken.isOk()) return broken;
    return remoteError(std::string("ucx: handshake ") + what + " with " + endpoint_->peer() +
                       " failed: " + w.describe(st));
  }
  *finished = true;
  return Status::ok();
}

Status StreamChannel::send(const uint8_t* buf, size_t want, size_t* have) {
  if (*have >= want) return Status::ok();
  if (out_.request == nullptr) {
    out_.bytes = want - *have;
    if (out_.bytes > kMaxBytes) return internalError("ucx: handshake message too long");
    std::memcpy(out_.data, buf + *have, out_.bytes);
    ucp_request_param_t param{};
    UcxWorker& w = endpoint_->worker();
    BRAID_RETURN_IF_ERROR(w.started(w.api().streamSendNbx(endpoint_->ep(), out_.data, out_.bytes, &param),
                                    "stream send", &out_.request));
    if (out_.request == nullptr) {
      *have = want;
      return Status::ok();
    }
  }
  bool finished = false;
  BRAID_RETURN_IF_ERROR(settle(out_, "send", &finished));
  if (finished) *have = want;
  return Status::ok();
}

Status StreamChannel::recv(uint8_t* buf, size_t want, size_t* have) {
  if (*have >= want) return Status::ok();
  if (in_.request == nullptr) {
    in_.bytes = want - *have;
    if (in_.bytes > kMaxBytes) return internalError("ucx: handshake message too long");
    ucp_request_param_t param{};
    // All of it or nothing: the handshake reads fixed-size messages.
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_STREAM_RECV_FLAG_WAITALL;
    size_t length = 0;
    UcxWorker& w = endpoint_->worker();
    BRAID_RETURN_IF_ERROR(
        w.started(w.api().streamRecvNbx(endpoint_->ep(), in_.data, in_.bytes, &length, &param),
                  "stream receive", &in_.request));
    if (in_.request == nullptr) {
      std::memcpy(buf + *have, in_.data, in_.bytes);
      *have = want;
      return Status::ok();
    }
  }
  bool finished = false;
  BRAID_RETURN_IF_ERROR(settle(in_, "receive", &finished));
  if (finished) {
    std::memcpy(buf + *have, in_.data, in_.bytes);
    *have = want;
  }
  return Status::ok();
}

}  // namespace braid::ucx

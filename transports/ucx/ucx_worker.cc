#include "transports/ucx/ucx_worker.h"

#include <poll.h>

#include <cerrno>

#include "base/deadline.h"
#include "base/log.h"

namespace braid::ucx {
namespace {

// How long a worker that is being destroyed waits for its endpoints' flushes:
// long enough for peers that are busy elsewhere for a moment; a peer that
// died is noticed by UCX before it.
constexpr int kFlushMs = 5000;

}  // namespace

Status UcxWorker::create(std::shared_ptr<UcxWorker>* out) {
  std::string whyNot;
  const UcpApi* api = loadUcp(&whyNot);
  if (api == nullptr) return notSupported("ucx: " + whyNot);
  std::shared_ptr<UcxWorker> w(new UcxWorker);
  w->api_ = api;

  ucp_config_t* config = nullptr;
  ucs_status_t st = api->configRead(nullptr, nullptr, &config);
  if (st != UCS_OK)
    return notSupported(std::string("ucx: reading UCX_* configuration: ") + api->statusString(st));
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  // Tags carry the data (rendezvous, zero copy where the fabric allows);
  // streams carry the connection handshake; wakeup gives wait() an fd.
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_STREAM | UCP_FEATURE_WAKEUP;
  st = api->initVersion(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &w->context_);
  api->configRelease(config);
  if (st != UCS_OK) return notSupported(std::string("ucx: ucp_init: ") + api->statusString(st));

  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  st = api->workerCreate(w->context_, &wp, &w->worker_);
  if (st != UCS_OK) return notSupported(std::string("ucx: ucp_worker_create: ") + api->statusString(st));
  st = api->workerGetEfd(w->worker_, &w->efd_);
  if (st != UCS_OK)
    return notSupported(std::string("ucx: no event fd for waiting: ") + api->statusString(st));
  *out = std::move(w);
  return Status::ok();
}

UcxWorker::~UcxWorker() {
  if (worker_) {
    Deadline deadline(kFlushMs);
    while (reap() && !deadline.expired()) (void)wait(1);
    if (!closing_.empty()) {
      BRAID_WARN(
          "ucx: %zu endpoint(s) did not flush within %d ms (their peers are busy or gone); closing them",
          closing_.size(), kFlushMs);
      dropUndelivered();
      Deadline last(kFlushMs);
      while (reap() && !last.expired()) progress();
      // Whatever UCX still holds goes with the worker.
      for (Closing& c : closing_) api_->requestFree(c.request);
    }
    api_->workerDestroy(worker_);
  }
  if (context_) api_->cleanup(context_);
}

void UcxWorker::dropUndelivered() {
  abandoned_ = true;
  for (Closing& c : closing_)
    if (c.flushing) {
      api_->requestFree(c.request);  // the flush ends with the forced close
      forceClose(c);                 // a null request: closed at once, reaped below
    }
  reap();
}

void UcxWorker::progress() {
  for (int i = 0; i < 64 && api_->workerProgress(worker_) != 0; ++i) {
  }
  if (!closing_.empty()) reap();
}

bool UcxWorker::forceClose(Closing& c) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t req = api_->epCloseNbx(c.ep, &param);
  c.flushing = false;
  c.request = UCS_PTR_IS_PTR(req) ? req : nullptr;
  return c.request != nullptr;
}

void UcxWorker::retire(ucp_ep_h ep, EndpointHealth* health, bool flush) {
  Closing c{ep, health, nullptr, false};
  if (flush && !abandoned_ && health->failed == UCS_OK) {
    ucp_request_param_t param{};
    ucs_status_ptr_t req = api_->epFlushNbx(ep, &param);
    if (UCS_PTR_IS_PTR(req)) c.request = req, c.flushing = true;
  }
  if (c.flushing || forceClose(c)) {
    closing_.push_back(c);
    return;
  }
  delete health;  // closed at once: no callback can come
}

bool UcxWorker::reap() {
  for (size_t i = 0; i < closing_.size();) {
    Closing& c = closing_[i];
    if (c.request != nullptr) {  // null: a close that finished at once
      if (api_->requestCheckStatus(c.request) == UCS_INPROGRESS) {
        ++i;
        continue;
      }
      api_->requestFree(c.request);
      c.request = nullptr;
      if (c.flushing && forceClose(c)) continue;  // look again at the close
    }
    delete c.health;
    closing_[i] = closing_.back();
    closing_.pop_back();
  }
  return !closing_.empty();
}

Status UcxWorker::wait(int timeoutMs) {
  progress();
  // Arm, then sleep; BUSY means events arrived since the last progress.
  ucs_status_t st = api_->workerArm(worker_);
  if (st == UCS_ERR_BUSY) return Status::ok();
  if (st != UCS_OK) return Status(Code::kSystemError, std::string("ucx: ucp_worker_arm: ") + describe(st));
  pollfd p{efd_, POLLIN, 0};
  if (poll(&p, 1, timeoutMs) < 0 && errno != EINTR) return systemError("ucx wait: poll", errno);
  return Status::ok();
}

Status UcxWorker::started(ucs_status_ptr_t ptr, const char* what, void** request) const {
  *request = nullptr;
  if (ptr == nullptr) return Status::ok();
  if (UCS_PTR_IS_ERR(ptr))
    return remoteError(std::string("ucx: ") + what + ": " + describe(UCS_PTR_STATUS(ptr)));
  *request = ptr;
  return Status::ok();
}

std::string UcxWorker::version() const {
  unsigned major = 0, minor = 0, release = 0;
  api_->getVersion(&major, &minor, &release);
  return "UCX " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace braid::ucx

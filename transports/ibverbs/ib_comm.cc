#include "transports/ibverbs/ib_comm.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/deadline.h"
#include "base/log.h"
#include "transports/ibverbs/ib_memory.h"

namespace braid::ibverbs {
namespace {

constexpr int kPollBatch = 16;
// How long a closing end waits for its goodbye to leave.
constexpr int kGoodbyeMs = 100;

}  // namespace

IbComm::IbComm(std::unique_ptr<QueuePair> qp, net::Fd side, std::string peer)
    : qp_(std::move(qp)), peer_(std::move(peer)), side_(std::move(side)) {}

IbComm::~IbComm() {
  // Registrations end before the queue pair: a peer still writing gets an
  // access error instead of reaching memory its owner may free.
  for (IbRequest* r : requests_)
    if (r->ownsMr) qp_->deregister(r->mr);
}

IbRequest* IbComm::newRequest(uint32_t tag, void* data, size_t size) {
  if (free_.empty()) {
    pool_.push_back(std::make_unique<IbRequest>());
    free_.push_back(pool_.back().get());
  }
  IbRequest* r = free_.back();
  free_.pop_back();
  r->bytes = r->written = 0;
  r->mr = nullptr;
  r->ownsMr = false;
  r->announced = r->posted = r->done = false;
  r->remote = 0;
  r->rkey = 0;
  r->comm = this;
  r->seq = nextSeq_++;
  r->tag = tag;
  r->data = static_cast<uint8_t*>(data);
  r->size = size;
  requests_.push_back(r);
  return r;
}

void IbComm::dropRegistration(IbRequest* r) {
  if (r->ownsMr) qp_->deregister(r->mr);
  r->mr = nullptr;
  r->ownsMr = false;
}

void IbComm::finish(IbRequest* r, size_t bytes) {
  r->bytes = bytes;
  r->done = true;
  dropRegistration(r);
}

void IbComm::release(IbRequest* r) {
  dropRegistration(r);
  requests_.erase(std::find(requests_.begin(), requests_.end(), r));
  free_.push_back(r);
}

Status IbComm::registrationFor(const void* data, size_t size, void* mhandle, bool forReceive,
                               ibv_mr** mr) const {
  *mr = nullptr;
  if (mhandle == nullptr) return Status::ok();
  const auto* memory = static_cast<const IbMemory*>(mhandle);
  if (!memory->covers(data, size))
    return invalidArgument(std::string("ibverbs ") + (forReceive ? "irecv" : "isend") + ": " +
                           std::to_string(size) + " bytes outside the registered buffer passed with them");
  if (forReceive && !memory->writable()) return Status::ok();
  *mr = memory->in(qp_->pd());
  if (*mr == nullptr)
    return internalError("ibverbs: a registered buffer has no registration on " + qp_->portName());
  return Status::ok();
}

Status IbComm::registerForMessage(IbRequest* r, bool remoteWrite) {
  if (r->mr != nullptr) return Status::ok();
  BRAID_RETURN_IF_ERROR(qp_->registerBuffer(r->data, r->size, remoteWrite, &r->mr));
  r->ownsMr = true;
  return Status::ok();
}

Status IbComm::fail(Status st) {
  if (failed_.isOk()) failed_ = std::move(st);
  return failed_;
}

Status IbComm::closedByPeer(const std::string& how) const {
  return remoteError("connection closed by peer " + peer_ + " (ibverbs " + qp_->portName() + ": " + how +
                     ")");
}

Status IbComm::checkPeerAlive() {
  const auto now = std::chrono::steady_clock::now();
  if (now < nextLivenessCheck_) return Status::ok();
  nextLivenessCheck_ = now + kLivenessEvery;
  uint8_t byte = 0;
  const ssize_t n = recv(side_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return closedByPeer("its process closed the side channel");
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    return closedByPeer(std::string("side channel: ") + std::strerror(errno));
  return Status::ok();
}

Status IbComm::pollCompletions(bool* any) {
  ibv_wc wc[kPollBatch];
  for (;;) {
    const int n = qp_->poll(wc, kPollBatch);
    if (n < 0)
      return fail(internalError("ibverbs " + qp_->portName() + ": the completion queue failed (overrun)"));
    for (int i = 0; i < n; ++i) {
      if (wc[i].status == IBV_WC_RETRY_EXC_ERR)
        return fail(closedByPeer("no answer: " + qp_->describe(wc[i])));
      if (wc[i].status != IBV_WC_SUCCESS)
        return fail(remoteError("ibverbs connection with peer " + peer_ + " on " + qp_->portName() +
                                " failed: " + qp_->describe(wc[i])));
      BRAID_RETURN_IF_ERROR(fail(onCompletion(wc[i])));
    }
    *any |= n > 0;
    if (n < kPollBatch) return Status::ok();
  }
}

Status IbComm::progress() {
  if (!failed_.isOk()) return failed_;
  bool any = false;
  BRAID_RETURN_IF_ERROR(pollCompletions(&any));
  BRAID_RETURN_IF_ERROR(fail(advance()));
  if (any || requests_.empty()) return Status::ok();
  Status alive = checkPeerAlive();
  if (alive.isOk()) return alive;
  // The peer may have sent its last message and closed between the poll
  // above and the check: what it sent before closing is in our completion
  // queue by now, and the requests it completes must succeed. Judged gone
  // only when a second look finds nothing.
  BRAID_RETURN_IF_ERROR(pollCompletions(&any));
  BRAID_RETURN_IF_ERROR(fail(advance()));
  return any ? Status::ok() : fail(std::move(alive));
}

Status IbComm::test(IbRequest* r, bool* done, size_t* size) {
  *done = false;
  if (!r->done) (void)progress();
  if (!r->done && failed_.isOk()) return Status::ok();
  *done = true;
  *size = r->done ? r->bytes : 0;
  Status st = r->done ? Status::ok() : failed_;
  release(r);
  return st;
}

void IbComm::sayGoodbye() {
  if (!failed_.isOk() || !qp_->canSendCtrl()) return;
  CtrlMsg bye;
  bye.kind = CtrlKind::kClose;
  if (!qp_->sendCtrl(bye).isOk()) return;
  // Only the goodbye's own completion matters now; the rest is dropped with
  // the queue pair.
  Deadline deadline(kGoodbyeMs);
  ibv_wc wc[kPollBatch];
  while (!deadline.expired()) {
    const int n = qp_->poll(wc, kPollBatch);
    if (n < 0) return;
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) return;
      if (workOf(wc[i].wr_id) == Work::kCtrlSend) qp_->ctrlSent();
    }
    if (qp_->ctrlIdle()) return;
  }
}

}  // namespace braid::ibverbs

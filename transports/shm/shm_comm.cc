#include "transports/shm/shm_comm.h"

#include <utility>

namespace braid::shm {
namespace {
constexpr int kLivenessCheckMs = 5;  // at most this often a pidfd poll, and only when idle
}

ShmComm::ShmComm(CommParts parts, bool sender)
    : ring_(std::move(parts.ring)),
      bellMap_(std::move(parts.peerBell)),
      ctl_(static_cast<RingControl*>(ring_.get())),
      ringBytes_(ring_.size() - kControlBytes),
      peerBell_(static_cast<DoorbellPage*>(bellMap_.get())),
      local_(std::move(parts.local)),
      ownBell_(local_->page()),
      peer_(parts.peerPid),
      cma_(parts.cma),
      push_(parts.push),
      cmaThreshold_(parts.cmaThreshold),
      myState_(sender ? &ctl_->senderState : &ctl_->receiverState),
      peerState_(sender ? &ctl_->receiverState : &ctl_->senderState),
      pendingCopies_(sender ? &ownBell_->pendingSends : &ownBell_->pendingRecvs) {
  data_.base = static_cast<uint8_t*>(ring_.get()) + kControlBytes;
  data_.mask = ringBytes_ - 1;
  local_->waitSet->add(this);
}

ShmComm::~ShmComm() {
  pendingCopies_->fetch_sub(counted_, std::memory_order_relaxed);
  local_->waitSet->remove(this);
  uint32_t open = static_cast<uint32_t>(EndState::kOpen);
  myState_->compare_exchange_strong(open, static_cast<uint32_t>(EndState::kClosed), std::memory_order_seq_cst);
  ringPeer();
}

ShmRequest* ShmComm::newRequest(uint32_t tag, void* data, size_t capacity) {
  ShmRequest* r = pool_.get();
  r->comm = this;
  r->seq = nextSeq_++;
  r->tag = tag;
  r->data = static_cast<uint8_t*>(data);
  r->capacity = capacity;
  (inflightTail_ ? inflightTail_->next : inflightHead_) = r;
  inflightTail_ = r;
  if (!cursor_) cursor_ = r;
  return r;
}

void ShmComm::retireCompleted() {
  while (inflightHead_ && inflightHead_->finished) {
    inflightHead_->completed = true;
    inflightHead_ = inflightHead_->next;
  }
  if (!inflightHead_) inflightTail_ = nullptr;
}

void ShmComm::count(ShmRequest* r) {
  r->counted = true;
  ++counted_;
  pendingCopies_->fetch_add(1, std::memory_order_relaxed);
}

Status ShmComm::fail(Status st) {
  pendingCopies_->fetch_sub(counted_, std::memory_order_relaxed);
  counted_ = 0;  // the requests are dropped below; their marks go with them
  if (failed_.isOk()) {
    failed_ = st;
    myState_->store(static_cast<uint32_t>(EndState::kFailed), std::memory_order_seq_cst);
    ringPeer();
  }
  inflightHead_ = inflightTail_ = cursor_ = nullptr;
  return failed_;
}

Status ShmComm::checkPeer() {
  if (peerEndGone()) {
    uint32_t state = peerState_->load(std::memory_order_acquire);
    if (state == static_cast<uint32_t>(EndState::kFailed))
      return remoteError("shm connection with " + peerName() +
                         " failed at the peer's end (see its log, e.g. a tag or size mismatch)");
    return remoteError("connection closed by " + peerName());
  }
  auto now = Clock::now();
  if (now - lastLivenessCheck_ < std::chrono::milliseconds(kLivenessCheckMs)) return Status::ok();
  lastLivenessCheck_ = now;
  if (peer_.exited()) return remoteError(peerName() + " exited");
  return Status::ok();
}

Status ShmComm::test(ShmRequest* req, bool* done, size_t* size) {
  *done = false;
  if (!req->completed && failed_.isOk()) {
    bool moved = false;
    Status st = progress(&moved);
    if (st.isOk() && !moved && !req->finished) {
      if (afterEmptyProgress_) std::exchange(afterEmptyProgress_, nullptr)();
      st = checkPeer();
      // The peer may have written its last message and exited between
      // progress() and checkPeer(): what it wrote is visible now. Judged
      // gone only when a second look moves nothing (as ib_comm.cc does).
      if (!st.isOk()) {
        bool again = false;
        Status second = progress(&again);
        if (!second.isOk() || again) st = std::move(second);
      }
    }
    if (!st.isOk()) (void)fail(std::move(st));
    retireCompleted();
  }
  if (req->completed) {
    *done = true;
    if (size) *size = req->total;
    pool_.put(req);
    return Status::ok();
  }
  if (!failed_.isOk()) {
    *done = true;
    pool_.put(req);
    return failed_;
  }
  return Status::ok();
}

}  // namespace braid::shm

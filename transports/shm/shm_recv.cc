// ShmRecvComm: reads frames in message order straight into the caller's
// buffers: inline payloads piece by piece out of the ring, CMA messages in one
// process_vm_readv from the sender's buffer, then acknowledged, unless the
// sender claimed the copy first and pushes it into the receive offered here.
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/cross_memory.h"
#include "base/log.h"
#include "transports/shm/shm_comm.h"

namespace braid::shm {
namespace {

// How long closing waits for a push the sender claimed to land: a copy of at
// most a few GB, unless the sender is stopped.
constexpr int kPushDrainMs = 10000;

}  // namespace

ShmRecvComm::~ShmRecvComm() {
  if (!cma_) return;
  withdrawOffer();  // no sender starts a push from it now; one that read it still needs the claim
  // Claims the next frame, so that nothing more is pushed here. Where that
  // fails, the sender claimed it (a frame this end claimed is counted in
  // nextCmaIndex_ already, even when its pull failed): its push may be under
  // way.
  uint64_t claim = nextCmaIndex_;
  if (ctl_->cmaClaimed.compare_exchange_strong(claim, claim + 1, std::memory_order_acq_rel)) return;
  const uint64_t landed = nextCmaIndex_ + 1;
  Deadline deadline(kPushDrainMs);
  while (ctl_->cmaDone.load(std::memory_order_acquire) < landed) {
    if (ctl_->senderState.load(std::memory_order_acquire) != 0 || peer_.exited()) return;
    if (deadline.expired()) {
      BRAID_WARN(
          "shm: %s claimed a push into a receive of this closing connection and has not finished it in "
          "%d ms; its buffer may still be written",
          peerName().c_str(), kPushDrainMs);
      return;
    }
    sched_yield();
  }
}

Status ShmRecvComm::irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) {
  (void)mhandle;
  *req = nullptr;
  if (!failed_.isOk()) return failed_;
  if (capacity > 0 && data == nullptr)
    return invalidArgument("shm irecv: null buffer with capacity " + std::to_string(capacity));
  ShmRequest* r = newRequest(tag, data, capacity);
  *req = static_cast<transport::Request*>(r);
  if (cma_ && capacity >= cmaThreshold_) count(r);
  if (cursor_ == r) refreshOffer();
  return Status::ok();
}

void ShmRecvComm::refreshOffer() {
  ShmRequest* r = cursor_;
  if (!r || r->headerDone || !cma_ || r->capacity < cmaThreshold_) {
    withdrawOffer();
    return;
  }
  if (offered_ && offeredSeq_ == r->seq) return;
  // A seqlock write: the sender reads the fields between two equal offerSeq.
  ctl_->offerSeq.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  ctl_->offerCmaIndex.store(nextCmaIndex_, std::memory_order_relaxed);
  ctl_->offerAddress.store(reinterpret_cast<uintptr_t>(r->data), std::memory_order_relaxed);
  ctl_->offerCapacity.store(r->capacity, std::memory_order_relaxed);
  ctl_->offerTag.store(r->tag, std::memory_order_relaxed);
  ctl_->offerSeq.store(uint64_t{r->seq} + 1, std::memory_order_release);
  offered_ = true;
  offeredSeq_ = r->seq;
}

void ShmRecvComm::withdrawOffer() {
  if (!offered_) return;
  ctl_->offerSeq.store(0, std::memory_order_release);
  offered_ = false;
}

uint64_t ShmRecvComm::available() {
  if (headCache_ == tail_) headCache_ = ctl_->head.load(std::memory_order_acquire);
  return headCache_ - tail_;
}

void ShmRecvComm::publish() {
  ctl_->tail.store(tail_, std::memory_order_release);
  published_ = tail_;
  ringPeer();
}

Status ShmRecvComm::acceptHeader(ShmRequest* r, const FrameHeader& h) {
  // Built only on the error paths: the hot path allocates nothing.
  auto where = [&] { return "from " + peerName() + " (receive #" + std::to_string(r->seq) + ")"; };
  if (!frameIntact(h))
    return remoteError("corrupted frame header " + where() + " (bad magic or check field); the ring cannot be trusted");
  if (h.seq != r->seq)
    return remoteError("shm ring out of step " + where() + ": expected message " + std::to_string(r->seq) + ", got " +
                       std::to_string(h.seq));
  if (h.tag != r->tag)
    return remoteError("tag mismatch " + where() + ": expected tag " + std::to_string(r->tag) + ", got tag " +
                       std::to_string(h.tag) + " (" + std::to_string(h.total) +
                       " bytes); the peer is probably running a different operation");
  if (h.total > r->capacity)
    return remoteError("message too large " + where() + ": expected at most " + std::to_string(r->capacity) +
                       " bytes, got " + std::to_string(h.total) + " bytes (tag " + std::to_string(h.tag) + ")");
  if (h.kind == static_cast<uint16_t>(FrameKind::kCma) && (!cma_ || h.cmaIndex != nextCmaIndex_))
    return remoteError("unexpected cross-memory-attach frame " + where());
  r->total = h.total;
  r->cma = h.kind == static_cast<uint16_t>(FrameKind::kCma);
  r->headerDone = true;
  return Status::ok();
}

Status ShmRecvComm::pull(ShmRequest* r, const FrameHeader& h) {
  if (const char* mapped = senderRegions_.find(peer_.pid(), h.regionId, h.regionFd, h.address, r->total)) {
    std::memcpy(r->data, mapped, r->total);
    ++pulledFromMappings_;
  } else if (const int err =
                 readProcessMemory(peer_.pid(), reinterpret_cast<const void*>(h.address), r->data, r->total);
             err != 0) {
    if (err == ESRCH) return remoteError(peerName() + " exited");
    return systemError("shm: process_vm_readv of " + std::to_string(r->total) + " bytes from " + peerName(),
                       err);
  }
  // A sender that closed its end meanwhile may have freed the buffer we read.
  if (ctl_->senderState.load(std::memory_order_acquire) != 0)
    return remoteError("connection closed by " + peerName() + " during a transfer");
  return Status::ok();
}

Status ShmRecvComm::claimOrLeave(ShmRequest* r, const FrameHeader& h, bool* pulledIt) {
  *pulledIt = false;
  uint64_t claim = nextCmaIndex_;
  if (!ctl_->cmaClaimed.compare_exchange_strong(claim, claim + 1, std::memory_order_acq_rel)) {
    if (claim != nextCmaIndex_ + 1)
      return remoteError("shm: the copy claims of " + peerName() + " are out of step (frame " +
                         std::to_string(nextCmaIndex_) + ", claimed up to " + std::to_string(claim) + ")");
    r->peerCopies = true;  // the sender pushes it
    return Status::ok();
  }
  ++nextCmaIndex_;  // first: a failed pull must not leave the claim looking like the sender's
  BRAID_RETURN_IF_ERROR(pull(r, h));
  ctl_->cmaDone.store(nextCmaIndex_, std::memory_order_release);
  ++pulled_;
  *pulledIt = true;
  return Status::ok();
}

Status ShmRecvComm::progress(bool* moved) {
  uint64_t start = tail_;
  bool acked = false, landed = false;
  while (ShmRequest* r = cursor_) {
    if (!r->headerDone) {
      if (available() < kLine) break;
      FrameHeader h;
      data_.copyOut(tail_, &h, kLine);
      BRAID_RETURN_IF_ERROR(acceptHeader(r, h));
      tail_ += kLine;
      if (r->cma) {
        bool pulledIt = false;
        BRAID_RETURN_IF_ERROR(claimOrLeave(r, h, &pulledIt));
        if (pulledIt) {
          acked = true;
          r->finished = true;
          uncount(r);
          cursor_ = r->next;
          continue;
        }
      }
    }
    if (r->peerCopies) {  // done when the sender says it landed
      if (ctl_->cmaDone.load(std::memory_order_acquire) <= nextCmaIndex_) break;
      ++nextCmaIndex_;
      landed = true;
      r->finished = true;
      uncount(r);
      cursor_ = r->next;
      continue;
    }
    uint64_t want = padded(r->total) - r->moved;
    while (want > 0) {
      uint64_t n = std::min({want, available(), kPublishBytes});
      if (n == 0) break;
      uint64_t real = r->moved < r->total ? std::min(n, r->total - r->moved) : 0;  // the rest is padding
      data_.copyOut(tail_, r->data + r->moved, real);
      tail_ += n, r->moved += n, want -= n;
      if (tail_ - published_ >= kPublishBytes) publish();
    }
    if (want > 0) break;
    r->finished = true;
    uncount(r);
    cursor_ = r->next;
  }
  refreshOffer();
  if (tail_ != published_ || acked) publish();
  *moved = tail_ != start || acked || landed;
  return Status::ok();
}

bool ShmRecvComm::peerEndGone() const {
  if (ctl_->senderState.load(std::memory_order_acquire) == 0) return false;
  return ctl_->head.load(std::memory_order_acquire) == tail_;  // nothing it wrote before closing is left
}

bool ShmRecvComm::mayProgress() const {
  if (!cursor_) return false;
  if (cursor_->peerCopies && ctl_->cmaDone.load(std::memory_order_relaxed) > nextCmaIndex_) return true;
  return ctl_->head.load(std::memory_order_relaxed) != tail_ || ctl_->senderState.load(std::memory_order_relaxed) != 0;
}

}  // namespace braid::shm

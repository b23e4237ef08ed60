// ShmSendComm: writes each message's frame into the ring: header and payload
// (in pieces as space frees up), or for a CMA message only a header describing
// the caller's buffer, which stays in place until it has been copied: pulled
// by the receiver, or pushed by this end into the receive the receiver
// offered, whichever end claimed the copy first (ring.h).
#include <algorithm>
#include <cerrno>

#include "base/cross_memory.h"
#include "base/shareable_memory.h"
#include "transports/shm/shm_comm.h"

namespace braid::shm {

Status ShmSendComm::isend(const void* data, size_t size, uint32_t tag, void* mhandle, transport::Request** req) {
  (void)mhandle;
  *req = nullptr;
  if (!failed_.isOk()) return failed_;
  if (size > 0 && data == nullptr) return invalidArgument("shm isend: null buffer with size " + std::to_string(size));
  ShmRequest* r = newRequest(tag, const_cast<void*>(data), size);
  r->total = size;
  r->cma = cma_ && size > 0 && size >= cmaThreshold_;
  if (r->cma) {
    r->cmaIndex = nextCmaIndex_++;
    count(r);
  }
  *req = static_cast<transport::Request*>(r);
  // Out at once when nothing is queued ahead of it: a CMA header costs a line,
  // and a peer that finds it can pull while this rank is busy elsewhere.
  // Left to test(), the header of a rank that first tests a receive would wait
  // behind that receive's pull, and two ranks exchanging blocks would pull
  // one after the other instead of together (measured: a 2-rank 16 MiB
  // all-to-all took 3.6 ms, its two 8 MiB pulls back to back).
  if (cursor_ == r) {
    writeFrames(kPublishBytes);
  }
  return Status::ok();
}

uint64_t ShmSendComm::freeBytes(uint64_t need) {
  uint64_t free = ringBytes_ - (head_ - tailCache_);
  if (free < need) {
    tailCache_ = ctl_->tail.load(std::memory_order_acquire);
    free = ringBytes_ - (head_ - tailCache_);
  }
  return free;
}

void ShmSendComm::publish() {
  ctl_->head.store(head_, std::memory_order_release);
  published_ = head_;
  ringPeer();
}

bool ShmSendComm::writeFrames(uint64_t payloadBudget) {
  uint64_t start = head_;
  while (ShmRequest* r = cursor_) {
    if (!r->headerDone) {
      if (freeBytes(kLine) < kLine) break;
      FrameHeader h;
      h.kind = static_cast<uint16_t>(r->cma ? FrameKind::kCma : FrameKind::kInline);
      h.tag = r->tag;
      h.seq = r->seq;
      h.total = r->total;
      if (r->cma) {
        h.address = reinterpret_cast<uintptr_t>(r->data), h.cmaIndex = r->cmaIndex;
        if (const ShareableRange region = findShareable(r->data, r->total); region.shareable())
          h.regionId = region.regionId, h.regionFd = region.fd;
      }
      h.check = frameCheck(h);
      data_.copyIn(head_, &h, kLine);  // frames start on 64-byte boundaries: never wraps
      head_ += kLine;
      r->headerDone = true;
      if (r->cma) {  // finished once the receiver acknowledges (progress())
        cursor_ = r->next;
        continue;
      }
    }
    uint64_t want = padded(r->total) - r->moved;
    while (want > 0 && payloadBudget > 0) {
      uint64_t n = std::min({want, freeBytes(want), kPublishBytes, payloadBudget});
      if (n == 0) break;
      uint64_t real = r->moved < r->total ? std::min(n, r->total - r->moved) : 0;  // the rest is padding
      data_.copyIn(head_, r->data + r->moved, real);
      head_ += n, r->moved += n, want -= n, payloadBudget -= n;
      if (head_ - published_ >= kPublishBytes) publish();
    }
    if (want > 0) break;
    r->finished = true;
    cursor_ = r->next;
  }
  if (head_ != published_) publish();
  return head_ != start;
}

bool ShmSendComm::mayPush() const {
  const int32_t mine = ownBell_->pendingSends.load(std::memory_order_relaxed);
  const int32_t theirs = peerBell_->pendingRecvs.load(std::memory_order_relaxed);
  return mine < theirs || (mine == theirs && peerBell_->busy.load(std::memory_order_relaxed) != 0);
}

Status ShmSendComm::tryPush(bool* moved) {
  awaitedOffer_ = 0;
  // The oldest CMA message not yet copied: its header is out (it is behind
  // the cursor) and its ordinal is cmaSeen_.
  ShmRequest* r = inflightHead_;
  while (r && r != cursor_ && !(r->cma && !r->finished)) r = r->next;
  if (!r || r == cursor_ || r->cmaIndex != cmaSeen_) return Status::ok();
  // The end with more copies ahead leaves this one to the other: a gather's
  // root has a receive per peer, so its peers push into its output in
  // parallel; a scatter's root a send per peer, so its peers pull, each on
  // its own core. Between equals (a ring step, a send / receive pair) the
  // receiver pulls, unless it is busy with local work (a 2-rank gather's
  // root copying its own block): then this end, waiting anyway, copies.
  // (Pushing between equals whenever the receiver had not pulled within a
  // few microseconds was measured on the 2-core VM too: in-place gathers
  // and send / receive pairs got 3-16% slower.)
  const uint64_t want = uint64_t{r->seq} + 1;
  awaitedOffer_ = want;  // mayProgress watches for the offer and the rule
  if (!mayPush() || ctl_->offerSeq.load(std::memory_order_acquire) != want) return Status::ok();
  const uint64_t index = ctl_->offerCmaIndex.load(std::memory_order_relaxed);
  const uint64_t address = ctl_->offerAddress.load(std::memory_order_relaxed);
  const uint64_t capacity = ctl_->offerCapacity.load(std::memory_order_relaxed);
  const uint32_t tag = ctl_->offerTag.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (ctl_->offerSeq.load(std::memory_order_relaxed) != want) return Status::ok();  // rewritten meanwhile
  // A receive that does not fit is left to the receiver, which fails it
  // naming both sides (acceptHeader).
  if (index != r->cmaIndex || tag != r->tag || r->total > capacity) return Status::ok();
  uint64_t unclaimed = r->cmaIndex;
  if (ctl_->cmaClaimed.load(std::memory_order_relaxed) != unclaimed ||
      !ctl_->cmaClaimed.compare_exchange_strong(unclaimed, unclaimed + 1, std::memory_order_acq_rel))
    return Status::ok();  // the receiver pulls it
  const int err = writeProcessMemory(peer_.pid(), reinterpret_cast<void*>(address), r->data, r->total);
  if (err == ESRCH) return remoteError(peerName() + " exited");
  if (err != 0)
    return systemError("shm: process_vm_writev of " + std::to_string(r->total) + " bytes to " + peerName(),
                       err);
  ctl_->cmaDone.store(r->cmaIndex + 1, std::memory_order_release);
  ringPeer();
  cmaSeen_ = r->cmaIndex + 1;
  r->finished = true;
  uncount(r);
  ++pushed_;
  *moved = true;
  return Status::ok();
}

Status ShmSendComm::progress(bool* moved) {
  *moved = writeFrames();
  if (push_ && nextCmaIndex_ > cmaSeen_) BRAID_RETURN_IF_ERROR(tryPush(moved));
  if (nextCmaIndex_ > cmaSeen_) {
    uint64_t done = ctl_->cmaDone.load(std::memory_order_acquire);
    if (done != cmaSeen_) {
      if (done > nextCmaIndex_) return remoteError("shm: " + peerName() + " acknowledged a pull it was never offered");
      cmaSeen_ = done;
      for (ShmRequest* r = inflightHead_; r && r != cursor_; r = r->next)
        if (r->cma && !r->finished && r->cmaIndex < done) {
          r->finished = true;
          uncount(r);
        }
      *moved = true;
    }
  }
  return Status::ok();
}

bool ShmSendComm::mayProgress() const {
  if (peerState_->load(std::memory_order_relaxed) != 0) return true;
  // An offered receive this end may push into, unless the receiver claimed
  // the copy already (its offer stays up while it pulls).
  if (awaitedOffer_ != 0 && ctl_->offerSeq.load(std::memory_order_relaxed) == awaitedOffer_ &&
      ctl_->cmaClaimed.load(std::memory_order_relaxed) == cmaSeen_ && mayPush())
    return true;
  if (nextCmaIndex_ > cmaSeen_ && ctl_->cmaDone.load(std::memory_order_relaxed) != cmaSeen_) return true;
  if (!cursor_) return false;
  uint64_t need = cursor_->headerDone ? 1 : kLine;
  return ringBytes_ - (head_ - ctl_->tail.load(std::memory_order_relaxed)) >= need;
}

}  // namespace braid::shm

// ShmSendComm: writes each message's frame into the ring: header and payload
// (in pieces as space frees up), or for a CMA message only a header describing
// the caller's buffer, which stays in place until the receiver acknowledges
// the pull.
#include <algorithm>

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
  if (r->cma) r->cmaIndex = nextCmaIndex_++;
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
      if (r->cma) h.address = reinterpret_cast<uintptr_t>(r->data), h.cmaIndex = r->cmaIndex;
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

Status ShmSendComm::progress(bool* moved) {
  *moved = writeFrames();
  if (nextCmaIndex_ > cmaSeen_) {
    uint64_t done = ctl_->cmaDone.load(std::memory_order_acquire);
    if (done != cmaSeen_) {
      if (done > nextCmaIndex_) return remoteError("shm: " + peerName() + " acknowledged a pull it was never offered");
      cmaSeen_ = done;
      for (ShmRequest* r = inflightHead_; r && r != cursor_; r = r->next)
        if (r->cma && !r->finished && r->cmaIndex < done) r->finished = true;
      *moved = true;
    }
  }
  return Status::ok();
}

bool ShmSendComm::mayProgress() const {
  if (peerState_->load(std::memory_order_relaxed) != 0) return true;
  if (nextCmaIndex_ > cmaSeen_ && ctl_->cmaDone.load(std::memory_order_relaxed) != cmaSeen_) return true;
  if (!cursor_) return false;
  uint64_t need = cursor_->headerDone ? 1 : kLine;
  return ringBytes_ - (head_ - ctl_->tail.load(std::memory_order_relaxed)) >= need;
}

}  // namespace braid::shm

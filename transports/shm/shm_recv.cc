// ShmRecvComm: reads frames in message order straight into the caller's
// buffers: inline payloads piece by piece out of the ring, CMA messages in one
// process_vm_readv from the sender's buffer, then acknowledged.
#include <algorithm>
#include <cerrno>

#include "base/cross_memory.h"
#include "transports/shm/shm_comm.h"

namespace braid::shm {

Status ShmRecvComm::irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) {
  (void)mhandle;
  *req = nullptr;
  if (!failed_.isOk()) return failed_;
  if (capacity > 0 && data == nullptr)
    return invalidArgument("shm irecv: null buffer with capacity " + std::to_string(capacity));
  *req = static_cast<transport::Request*>(newRequest(tag, data, capacity));
  return Status::ok();
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

Status ShmRecvComm::pull(ShmRequest* r, uint64_t address) {
  const int err = readProcessMemory(peer_.pid(), reinterpret_cast<const void*>(address), r->data, r->total);
  if (err == ESRCH) return remoteError(peerName() + " exited");
  if (err != 0)
    return systemError("shm: process_vm_readv of " + std::to_string(r->total) + " bytes from " + peerName(),
                       err);
  // A sender that closed its end meanwhile may have freed the buffer we read.
  if (ctl_->senderState.load(std::memory_order_acquire) != 0)
    return remoteError("connection closed by " + peerName() + " during a transfer");
  return Status::ok();
}

Status ShmRecvComm::progress(bool* moved) {
  uint64_t start = tail_;
  bool acked = false;
  while (ShmRequest* r = cursor_) {
    if (!r->headerDone) {
      if (available() < kLine) break;
      FrameHeader h;
      data_.copyOut(tail_, &h, kLine);
      BRAID_RETURN_IF_ERROR(acceptHeader(r, h));
      tail_ += kLine;
      if (r->cma) {
        BRAID_RETURN_IF_ERROR(pull(r, h.address));
        ctl_->cmaDone.store(++nextCmaIndex_, std::memory_order_release);
        acked = true;
        r->finished = true;
        cursor_ = r->next;
        continue;
      }
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
    cursor_ = r->next;
  }
  if (tail_ != published_ || acked) publish();
  *moved = tail_ != start || acked;
  return Status::ok();
}

bool ShmRecvComm::peerEndGone() const {
  if (ctl_->senderState.load(std::memory_order_acquire) == 0) return false;
  return ctl_->head.load(std::memory_order_acquire) == tail_;  // nothing it wrote before closing is left
}

bool ShmRecvComm::mayProgress() const {
  if (!cursor_) return false;
  return ctl_->head.load(std::memory_order_relaxed) != tail_ || ctl_->senderState.load(std::memory_order_relaxed) != 0;
}

}  // namespace braid::shm

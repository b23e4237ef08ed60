// TcpRecvComm: reads each socket's frames in message order, straight into the
// caller's buffer. Headers and small payloads arrive through a per-socket
// staging buffer (one recv for several frames); a large payload is read with
// readv directly into the caller's buffer, the bytes after it into staging.
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>

#include "transports/tcp/tcp_comm.h"

namespace braid::tcp {
namespace {
constexpr size_t kStagingBytes = 64 << 10;
}

TcpRecvComm::TcpRecvComm(std::vector<net::Fd> socks, std::string peer, std::shared_ptr<PollSet> pollSet)
    : TcpComm(std::move(socks), std::move(peer), std::move(pollSet)) {
  for (Socket& s : socks_) s.staging = std::make_unique<uint8_t[]>(kStagingBytes);
}

Status TcpRecvComm::irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) {
  (void)mhandle;
  *req = nullptr;
  if (!failed_.isOk()) return failed_;
  if (capacity > 0 && data == nullptr)
    return invalidArgument("tcp irecv: null buffer with capacity " + std::to_string(capacity));
  TcpRequest* r = newRequest(tag, data, capacity);
  if (!leadReq_) leadReq_ = r;
  *req = static_cast<transport::Request*>(r);
  return Status::ok();
}

Status TcpRecvComm::progress() {
  // Another pass only when a lead header queued parts on other sockets.
  for (bool again = true; again;) {
    again = false;
    for (int s = 0; s < nSocks(); ++s) BRAID_RETURN_IF_ERROR(pullSocket(s, &again));
  }
  return Status::ok();
}

Status TcpRecvComm::stageHeader(int s, bool* ready) {
  Socket& sock = socks_[s];
  *ready = sock.end - sock.begin >= kFrameHeaderBytes;
  if (*ready) return Status::ok();
  if (sock.begin > 0) {
    std::memmove(sock.staging.get(), sock.staging.get() + sock.begin, sock.end - sock.begin);
    sock.end -= sock.begin;
    sock.begin = 0;
  }
  while (sock.end < kFrameHeaderBytes) {
    ssize_t n = recv(sock.fd.get(), sock.staging.get() + sock.end, kStagingBytes - sock.end, MSG_DONTWAIT);
    if (n == 0) return closedByPeer(s);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::ok();
      return socketError("recv", s, errno);
    }
    sock.end += n;
  }
  *ready = true;
  return Status::ok();
}

Status TcpRecvComm::acceptLeadHeader(int s, const FrameHeader& h) {
  TcpRequest* r = leadReq_;
  // Built only on the error paths: the hot path allocates nothing.
  auto where = [&] { return "from peer " + peer_ + " (receive #" + std::to_string(r->seq) + ")"; };
  if (h.seq != r->seq || h.partIndex != 0 || h.nParts < 1 || h.nParts > nSocks())
    return remoteError("tcp stream out of step " + where() + ": expected part 0 of message " + std::to_string(r->seq) +
                       ", got part " + std::to_string(h.partIndex) + "/" + std::to_string(h.nParts) +
                       " of message " + std::to_string(h.seq));
  if (h.tag != r->tag)
    return remoteError("tag mismatch " + where() + ": expected tag " + std::to_string(r->tag) + ", got tag " +
                       std::to_string(h.tag) + " (" + std::to_string(h.total) +
                       " bytes); the peer is probably running a different operation");
  if (h.total > r->capacity)
    return remoteError("message too large " + where() + ": expected at most " + std::to_string(r->capacity) +
                       " bytes, got " + std::to_string(h.total) + " bytes (tag " + std::to_string(h.tag) + ")");
  r->total = h.total;
  r->nParts = r->partsLeft = h.nParts;
  for (int i = 0; i < r->nParts; ++i) {
    Part& p = r->parts[i];
    size_t offset = 0;
    partRange(r->total, r->nParts, i, &offset, &p.size);
    p.req = r;
    p.data = r->data + offset;
    p.done = 0;
    p.index = static_cast<uint16_t>(i);
    p.headerDone = i == 0 ? kFrameHeaderBytes : 0;
    socks_[(r->seq + i) % socks_.size()].queue.push(&p);
  }
  if (h.partSize != r->parts[0].size)
    return remoteError("corrupted frame " + where() + ": part size " + std::to_string(h.partSize) + " does not match " +
                       std::to_string(r->parts[0].size));
  (void)s;
  leadReq_ = r->next;
  return Status::ok();
}

Status TcpRecvComm::checkPartHeader(int s, const FrameHeader& h, const Part& p) {
  const TcpRequest& r = *p.req;
  if (h.seq == r.seq && h.partIndex == p.index && h.nParts == r.nParts && h.total == r.total && h.tag == r.tag &&
      h.partSize == p.size)
    return Status::ok();
  return remoteError("tcp stream from peer " + peer_ + " out of step on socket " + std::to_string(s) +
                     ": expected part " + std::to_string(p.index) + " of message " + std::to_string(r.seq) +
                     ", got part " + std::to_string(h.partIndex) + " of message " + std::to_string(h.seq));
}

Status TcpRecvComm::pullSocket(int s, bool* leadParsed) {
  Socket& sock = socks_[s];
  for (;;) {
    Part* p = sock.queue.head;
    if (!p || p->headerDone < kFrameHeaderBytes) {
      if (!p && leadSocket() != s) return Status::ok();  // nothing expected on this socket yet
      bool ready = false;
      BRAID_RETURN_IF_ERROR(stageHeader(s, &ready));
      if (!ready) return Status::ok();
      FrameHeader h;
      if (!decodeFrame(sock.staging.get() + sock.begin, &h))
        return remoteError("corrupted frame header from peer " + peer_ + " on socket " + std::to_string(s) +
                           " (bad magic or check field); the connection cannot be trusted any more");
      sock.begin += kFrameHeaderBytes;
      if (!p) {
        BRAID_RETURN_IF_ERROR(acceptLeadHeader(s, h));
        *leadParsed = true;
        p = sock.queue.head;
      } else {
        BRAID_RETURN_IF_ERROR(checkPartHeader(s, h, *p));
        p->headerDone = kFrameHeaderBytes;
      }
    }
    size_t want = p->size - p->done;
    if (want > 0 && sock.end > sock.begin) {
      size_t n = std::min(want, sock.end - sock.begin);
      std::memcpy(p->data + p->done, sock.staging.get() + sock.begin, n);
      sock.begin += n, p->done += n, want -= n;
    }
    if (want > 0) {  // staging is empty: read the payload in place, what follows into staging
      sock.begin = sock.end = 0;
      iovec iov[2] = {{p->data + p->done, want}, {sock.staging.get(), kStagingBytes}};
      ssize_t n = readv(sock.fd.get(), iov, 2);
      if (n == 0) return closedByPeer(s);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::ok();
        return socketError("readv", s, errno);
      }
      size_t direct = std::min(static_cast<size_t>(n), want);
      p->done += direct;
      sock.end = static_cast<size_t>(n) - direct;
      if (p->done < p->size) continue;
    }
    sock.queue.pop();
    --p->req->partsLeft;
  }
}

bool TcpRecvComm::addPollFds(std::vector<pollfd>* fds) const {
  if (!failed_.isOk()) return false;
  bool readyNow = false;
  for (int s = 0; s < nSocks(); ++s) {
    const Socket& sock = socks_[s];
    const Part* p = sock.queue.head;
    if (!p && leadSocket() != s) continue;
    size_t staged = sock.end - sock.begin;
    bool needHeader = !p || p->headerDone < kFrameHeaderBytes;
    if (needHeader ? staged >= kFrameHeaderBytes : staged > 0)
      readyNow = true;
    else
      fds->push_back({sock.fd.get(), POLLIN, 0});
  }
  return readyNow;
}

}  // namespace braid::tcp

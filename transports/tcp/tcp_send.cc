// TcpSendComm: queues each message's parts on their sockets and pushes them
// with sendmsg straight from the caller's buffer (header and payload, and
// several small messages, gathered into one call).
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>

#include "transports/tcp/tcp_comm.h"

namespace braid::tcp {
namespace {
constexpr int kMaxIov = 32;  // 16 parts (header + payload each) per sendmsg
}

Status TcpSendComm::isend(const void* data, size_t size, uint32_t tag, void* mhandle, transport::Request** req) {
  (void)mhandle;
  *req = nullptr;
  if (!failed_.isOk()) return failed_;
  if (size > 0 && data == nullptr) return invalidArgument("tcp isend: null buffer with size " + std::to_string(size));
  TcpRequest* r = newRequest(tag, const_cast<void*>(data), size);
  r->total = size;
  r->nParts = r->partsLeft = partsFor(size, nSocks());
  FrameHeader h;
  h.tag = tag;
  h.total = size;
  h.seq = r->seq;
  h.nParts = static_cast<uint16_t>(r->nParts);
  for (int i = 0; i < r->nParts; ++i) {
    Part& p = r->parts[i];
    size_t offset = 0;
    partRange(size, r->nParts, i, &offset, &p.size);
    p.req = r;
    p.data = r->data + offset;
    p.done = 0;
    p.headerDone = 0;
    p.index = static_cast<uint16_t>(i);
    h.partIndex = static_cast<uint16_t>(i);
    h.partSize = p.size;
    encodeFrame(h, p.header);
    socks_[(r->seq + i) % socks_.size()].queue.push(&p);
  }
  *req = static_cast<transport::Request*>(r);
  return Status::ok();
}

Status TcpSendComm::progress() {
  for (int s = 0; s < nSocks(); ++s) BRAID_RETURN_IF_ERROR(pushSocket(s));
  return Status::ok();
}

Status TcpSendComm::pushSocket(int s) {
  Socket& sock = socks_[s];
  while (!sock.queue.empty()) {
    iovec iov[kMaxIov];
    int n = 0;
    for (Part* p = sock.queue.head; p && n + 2 <= kMaxIov; p = p->next) {
      if (p->headerDone < kFrameHeaderBytes)
        iov[n++] = {p->header + p->headerDone, kFrameHeaderBytes - p->headerDone};
      if (p->done < p->size) iov[n++] = {p->data + p->done, p->size - p->done};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    ssize_t sent = sendmsg(sock.fd.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::ok();
      return socketError("sendmsg", s, errno);
    }
    size_t left = static_cast<size_t>(sent), offered = 0;
    for (int i = 0; i < n; ++i) offered += iov[i].iov_len;
    // Account the bytes to the parts in queue order.
    while (Part* p = sock.queue.head) {
      size_t h = std::min(left, kFrameHeaderBytes - p->headerDone);
      p->headerDone += h, left -= h;
      size_t d = std::min(left, p->size - p->done);
      p->done += d, left -= d;
      if (p->headerDone < kFrameHeaderBytes || p->done < p->size) break;
      sock.queue.pop();
      --p->req->partsLeft;
    }
    if (static_cast<size_t>(sent) < offered) return Status::ok();  // the socket buffer is full
  }
  return Status::ok();
}

bool TcpSendComm::addPollFds(std::vector<pollfd>* fds) const {
  if (!failed_.isOk()) return false;
  for (const Socket& s : socks_)
    if (!s.queue.empty()) fds->push_back({s.fd.get(), POLLOUT, 0});
  return false;
}

}  // namespace braid::tcp

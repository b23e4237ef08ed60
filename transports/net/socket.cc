// Non-blocking sockets with deadlines: listen, accept, connect, send, receive.
#include "transports/net/socket.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <thread>

namespace braid::net {
namespace {

std::string peerOf(int fd) {
  SocketAddress peer;
  peer.length = sizeof(peer.storage);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer.storage), &peer.length) != 0) return "(unknown address)";
  return peer.toString();
}

Status closedByPeer(int fd) { return remoteError("connection closed by peer " + peerOf(fd)); }

bool peerGone(int err) { return err == EPIPE || err == ECONNRESET || err == ENOTCONN || err == ETIMEDOUT; }

Status newSocket(int family, Fd* fd) {
  int s = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return systemError("socket", errno);
  fd->reset(s);
  return Status::ok();
}

// Waits until fd is ready for `events` or the deadline passes.
// `verb` and `addr` (the peer when known, else looked up) only word the timeout.
Status pollOne(int fd, short events, const Deadline& deadline, const char* verb,
               const SocketAddress* addr = nullptr) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, deadline.remainingMs());
    if (rc > 0) return Status::ok();  // errors / hangups surface in the next I/O call
    if (rc < 0 && errno != EINTR) return systemError("poll", errno);
    if (deadline.expired()) return timeoutError(std::string("timed out ") + verb + " " + (addr ? addr->toString() : peerOf(fd)));
  }
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

Status setNoDelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) return systemError("setsockopt(TCP_NODELAY)", errno);
  return Status::ok();
}

Status setTrafficClass(int fd, int trafficClass) {
  if (trafficClass < 0 || trafficClass > 255)
    return invalidArgument("traffic class " + std::to_string(trafficClass) + " is outside [0, 255]");
  int family = 0;
  socklen_t len = sizeof(family);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &len) != 0)
    return systemError("getsockopt(SO_DOMAIN)", errno);
  if (family == AF_INET6 &&
      setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &trafficClass, sizeof(trafficClass)) != 0)
    return systemError("setsockopt(IPV6_TCLASS)", errno);
  // An IPv6 socket takes IP_TOS too (for the IPv4-mapped peers it may reach);
  // where it refuses, the IPv6 class above is what it sends with.
  if (setsockopt(fd, IPPROTO_IP, IP_TOS, &trafficClass, sizeof(trafficClass)) != 0 && family == AF_INET)
    return systemError("setsockopt(IP_TOS)", errno);
  return Status::ok();
}

Status setBufferSizes(int fd, int bytes) {
  // The kernel caps these at net.core.{w,r}mem_max without failing.
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)) != 0) return systemError("setsockopt(SO_SNDBUF)", errno);
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) != 0) return systemError("setsockopt(SO_RCVBUF)", errno);
  return Status::ok();
}

Status listenOn(const SocketAddress& bind, int backlog, Fd* fd, SocketAddress* bound) {
  Fd s;
  BRAID_RETURN_IF_ERROR(newSocket(bind.family(), &s));
  int one = 1;
  if (setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
    return systemError("setsockopt(SO_REUSEADDR)", errno);
  if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&bind.storage), bind.length) != 0)
    return systemError("bind to " + bind.toString(), errno);
  if (::listen(s.get(), backlog) != 0) return systemError("listen on " + bind.toString(), errno);
  SocketAddress real;
  real.length = sizeof(real.storage);
  if (getsockname(s.get(), reinterpret_cast<sockaddr*>(&real.storage), &real.length) != 0)
    return systemError("getsockname", errno);
  *bound = real;
  *fd = std::move(s);
  return Status::ok();
}

Status acceptOne(int listenFd, Fd* conn, SocketAddress* peer) {
  conn->reset();
  SocketAddress from;
  from.length = sizeof(from.storage);
  int s = accept4(listenFd, reinterpret_cast<sockaddr*>(&from.storage), &from.length, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (s < 0) {
    int err = errno;
    // Nothing pending, or a connection that died in the backlog: not our error.
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED || err == EPROTO) return Status::ok();
    return systemError("accept", err);
  }
  conn->reset(s);
  if (peer) *peer = from;
  return Status::ok();
}

Status startConnect(const SocketAddress& addr, Fd* fd, int* err, int trafficClass) {
  Fd s;
  BRAID_RETURN_IF_ERROR(newSocket(addr.family(), &s));
  if (trafficClass >= 0) BRAID_RETURN_IF_ERROR(setTrafficClass(s.get(), trafficClass));
  *err = 0;
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) != 0) {
    *err = errno == EINTR ? EINPROGRESS : errno;  // an interrupted connect goes on in the background
    if (*err != EINPROGRESS) return Status::ok();
  }
  *fd = std::move(s);
  return Status::ok();
}

int connectResult(int fd) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

Status connectTo(const SocketAddress& addr, const Deadline& deadline, Fd* fd) {
  int backoffMs = 1;
  for (;;) {
    Fd s;
    int err = 0;
    BRAID_RETURN_IF_ERROR(startConnect(addr, &s, &err));
    if (err == EINPROGRESS) {
      BRAID_RETURN_IF_ERROR(pollOne(s.get(), POLLOUT, deadline, "connecting to", &addr));
      err = connectResult(s.get());
    }
    if (err == 0) {
      BRAID_RETURN_IF_ERROR(setNoDelay(s.get()));
      *fd = std::move(s);
      return Status::ok();
    }
    // Refused: the listener may not be up yet. Anything else is final.
    if (err != ECONNREFUSED) return systemError("connect to " + addr.toString(), err);
    if (deadline.expired()) return timeoutError("connect to " + addr.toString() + " refused until the deadline");
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(backoffMs, deadline.remainingMs())));
    backoffMs = std::min(backoffMs * 2, 100);
  }
}

Status sendSome(int fd, const void* data, size_t size, size_t* done) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n, size -= n, *done += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::ok();
    if (n < 0 && peerGone(errno)) return closedByPeer(fd);
    return systemError("send to " + peerOf(fd), errno);
  }
  return Status::ok();
}

Status recvSome(int fd, void* data, size_t size, size_t* done) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = recv(fd, p, size, MSG_DONTWAIT);
    if (n > 0) {
      p += n, size -= n, *done += n;
      continue;
    }
    if (n == 0) return closedByPeer(fd);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::ok();
    if (peerGone(errno)) return closedByPeer(fd);
    return systemError("recv from " + peerOf(fd), errno);
  }
  return Status::ok();
}

Status sendAll(int fd, const void* data, size_t size, const Deadline& deadline) {
  size_t done = 0;
  for (;;) {
    BRAID_RETURN_IF_ERROR(sendSome(fd, static_cast<const char*>(data) + done, size - done, &done));
    if (done == size) return Status::ok();
    BRAID_RETURN_IF_ERROR(pollOne(fd, POLLOUT, deadline, "sending to"));
  }
}

Status recvAll(int fd, void* data, size_t size, const Deadline& deadline) {
  size_t done = 0;
  for (;;) {
    BRAID_RETURN_IF_ERROR(recvSome(fd, static_cast<char*>(data) + done, size - done, &done));
    if (done == size) return Status::ok();
    BRAID_RETURN_IF_ERROR(pollOne(fd, POLLIN, deadline, "receiving from"));
  }
}

}  // namespace braid::net

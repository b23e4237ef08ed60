// Socket plumbing shared by the TCP transport and the bootstrap: addresses,
// interface choice, non-blocking sockets with deadlines. No protocol here.
//
// Every blocking-looking helper takes a Deadline and polls; nothing waits
// forever. All fds are O_CLOEXEC and non-blocking.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"

namespace braid::net {

// IPv4 or IPv6 address with port. Fits in 28 bytes when packed (see pack()).
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  // "1.2.3.4:5678" or "[fe80::1%eth0]:5678".
  std::string toString() const;
  bool isLoopback() const;

  // Fixed-size encoding for ids and handles: 1 byte family, 2 port, 16 addr,
  // 4 scope id; 23 bytes used of kPackedBytes.
  static constexpr size_t kPackedBytes = 32;
  void pack(uint8_t out[kPackedBytes]) const;
  // Fails with InvalidArgument on an unknown family or garbage.
  static Status unpack(const uint8_t in[kPackedBytes], SocketAddress* out);
};

// "host:port", "[v6addr]:port", "v4addr:port"; host may be a name (resolved).
Status parseAddress(const std::string& hostPort, SocketAddress* out);

struct Interface {
  std::string name;       // "eth0"
  SocketAddress address;  // port 0
  double speedMbps = 0;   // from /sys/class/net/<name>/speed when known
  bool loopback = false;
};

// Interfaces that are up and have an address, in the order the selector
// prefers. Selector syntax (BRAID_SOCKET_IFNAME, as NCCL_SOCKET_IFNAME):
// "" = any non-loopback first then loopback; "eth,ib" = name prefixes;
// "^lo,docker" = exclude prefixes; "=eth0" = exact names. family: AF_UNSPEC,
// AF_INET or AF_INET6. IPv6 link-local addresses are skipped; one address per
// interface (IPv4 preferred). No match is not an error: *out is left empty.
Status findInterfaces(const std::string& selector, int family, std::vector<Interface>* out);

// RAII owner of a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Listens on `bind` (port 0: ephemeral); *bound gets the real address.
Status listenOn(const SocketAddress& bind, int backlog, Fd* fd, SocketAddress* bound);
// Accepts one pending connection if any (*conn stays invalid when none).
Status acceptOne(int listenFd, Fd* conn, SocketAddress* peer);
// Connects, retrying refused connections (the listener may not be up yet)
// until the deadline. TCP_NODELAY is set on the result.
Status connectTo(const SocketAddress& addr, const Deadline& deadline, Fd* fd);

// The two halves of connectTo for callers that must not block. startConnect
// opens a non-blocking socket and starts connecting; *err is 0 when already
// connected, EINPROGRESS when the caller must wait for POLLOUT and then ask
// connectResult, else the errno of an immediate failure (fd left invalid).
// connectResult gives 0 once connected, else the errno of the failed attempt
// (ECONNREFUSED: nobody listens yet; the caller may retry).
// trafficClass >= 0: set on the socket before it connects (setTrafficClass),
// so that the handshake's packets carry it too.
Status startConnect(const SocketAddress& addr, Fd* fd, int* err, int trafficClass = -1);
int connectResult(int fd);

// Non-blocking I/O on a non-blocking fd: moves as much as possible now.
// *done += bytes moved. A closed peer is RemoteError "connection closed by peer".
Status sendSome(int fd, const void* data, size_t size, size_t* done);
Status recvSome(int fd, void* data, size_t size, size_t* done);
// Whole buffers, polling until done or the deadline (Timeout).
Status sendAll(int fd, const void* data, size_t size, const Deadline& deadline);
Status recvAll(int fd, void* data, size_t size, const Deadline& deadline);

Status setNoDelay(int fd);
Status setBufferSizes(int fd, int bytes);
// The traffic class of the socket's packets, 0-255: the IPv4 TOS byte
// (IP_TOS) or the IPv6 traffic class (IPV6_TCLASS; on an IPv6 socket both,
// for IPv4-mapped peers), that is DSCP << 2 | ECN. What a network's switches
// queue and mark by (RoCE's traffic class is the same byte). The kernel keeps
// the ECN bits to itself on TCP sockets.
Status setTrafficClass(int fd, int trafficClass);

}  // namespace braid::net

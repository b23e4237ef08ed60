#include "transports/shm/handshake.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cstring>
#include <fstream>

#include "transports/net/auth.h"

namespace braid::shm {
namespace {

constexpr uint32_t kHandleMagic = 0x48534252;
constexpr uint8_t kHandleVersion = 1;

socklen_t abstractAddress(const ListenerName& name, sockaddr_un* addr) {
  std::string path = describe(name);
  *addr = {};
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path + 1, path.data(), path.size());  // sun_path[0] == 0: abstract
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + path.size());
}

template <typename T>
uint64_t macOf(const transport::Secret& secret, const char (&domain)[9], const ListenerName& name, const T& msg) {
  uint8_t buf[8 + sizeof(ListenerName) + sizeof(T)];
  std::memcpy(buf, domain, 8);
  std::memcpy(buf + 8, name.data(), name.size());
  std::memcpy(buf + 8 + name.size(), &msg, offsetof(T, mac));
  return net::sipHash24(secret, buf, 8 + name.size() + offsetof(T, mac));
}

}  // namespace

void encodeHandle(const HandleInfo& info, transport::Handle* handle) {
  *handle = transport::Handle{};
  uint8_t* b = handle->bytes.data();
  std::memcpy(b, &kHandleMagic, 4);
  b[4] = kHandleVersion;
  uint32_t pid = static_cast<uint32_t>(info.pid);
  std::memcpy(b + 8, &pid, 4);
  std::memcpy(b + 16, info.name.data(), info.name.size());
  std::memcpy(b + 32, &info.locality, 8);
}

bool decodeHandle(const transport::Handle& handle, HandleInfo* info) {
  const uint8_t* b = handle.bytes.data();
  uint32_t magic = 0, pid = 0;
  std::memcpy(&magic, b, 4);
  if (magic != kHandleMagic || b[4] != kHandleVersion) return false;
  for (size_t i = 40; i < transport::kHandleBytes; ++i)
    if (b[i] != 0) return false;
  std::memcpy(&pid, b + 8, 4);
  info->pid = static_cast<pid_t>(pid);
  std::memcpy(info->name.data(), b + 16, info->name.size());
  std::memcpy(&info->locality, b + 32, 8);
  return true;
}

uint64_t localityKey() {
  static const uint64_t key = [] {
    // boot id (36 characters) then the network namespace's device and inode.
    uint64_t buf[8] = {};
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    in.read(reinterpret_cast<char*>(buf), 40);
    struct stat st {};
    if (stat("/proc/self/ns/net", &st) == 0) buf[6] = st.st_dev, buf[7] = st.st_ino;
    static const transport::Secret kKey = {'b', 'r', 'a', 'i', 'd', '-', 's', 'h', 'm', '-', 'h', 'o', 's', 't', 0, 1};
    return net::sipHash24(kKey, buf, sizeof(buf));
  }();
  return key;
}

std::string describe(const ListenerName& name) {
  static const char kHex[] = "0123456789abcdef";
  char hex[2 * sizeof(ListenerName) + 1] = {};
  for (size_t i = 0; i < name.size(); ++i) hex[2 * i] = kHex[name[i] >> 4], hex[2 * i + 1] = kHex[name[i] & 15];
  return std::string("braid-shm-") + hex;
}

Status listenAbstract(const ListenerName& name, net::Fd* fd) {
  net::Fd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.valid()) return systemError("shm: socket(AF_UNIX, SOCK_SEQPACKET)", errno);
  sockaddr_un addr;
  socklen_t len = abstractAddress(name, &addr);
  if (bind(s.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
    return systemError("shm: bind of listener " + describe(name), errno);
  if (::listen(s.get(), 512) != 0) return systemError("shm: listen on " + describe(name), errno);
  *fd = std::move(s);
  return Status::ok();
}

Status connectAbstract(const ListenerName& name, net::Fd* fd, int* err) {
  net::Fd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.valid()) return systemError("shm: socket(AF_UNIX, SOCK_SEQPACKET)", errno);
  sockaddr_un addr;
  socklen_t len = abstractAddress(name, &addr);
  *err = ::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0 ? 0 : errno;
  if (*err == 0) *fd = std::move(s);
  return Status::ok();
}

uint64_t helloMac(const transport::Secret& secret, const ListenerName& name, const Hello& h) {
  return macOf(secret, "shmhello", name, h);
}

uint64_t replyMac(const transport::Secret& secret, const ListenerName& name, const Reply& r) {
  return macOf(secret, "shmreply", name, r);
}

Status sendWithFds(int sock, const void* data, size_t size, const int* fds, int nfds) {
  iovec iov{const_cast<void*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  for (;;) {
    ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(size)) return Status::ok();
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return remoteError("shm: the peer closed the socket");
    return systemError("shm: sendmsg of a setup message", n < 0 ? errno : EMSGSIZE);
  }
}

Status recvWithFds(int sock, void* data, size_t size, int maxFds, std::vector<net::Fd>* fds, bool* got) {
  *got = false;
  fds->clear();
  std::vector<uint8_t> buf(size + 1);  // one spare byte: a longer message shows as too long, not as a fit
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::ok();
  if (n < 0 && errno == ECONNRESET) return remoteError("closed");
  if (n < 0) return systemError("shm: recvmsg of a setup message", errno);
  // Descriptors first, whatever the length: a zero-byte message may carry
  // some, and they are ours (installed by the kernel) from here on.
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds->emplace_back(fd);  // owned from here on: closed on every error path
    }
  }
  if (n == 0 && fds->empty()) return remoteError("closed");  // EOF, or an empty message: both end the setup
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || static_cast<size_t>(n) != size ||
      fds->size() > static_cast<size_t>(maxFds)) {
    fds->clear();
    return remoteError("malformed setup message (" + std::to_string(n) + " bytes)");
  }
  std::memcpy(data, buf.data(), size);
  *got = true;
  return Status::ok();
}

Status peerPid(int sock, pid_t* pid) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return systemError("shm: SO_PEERCRED", errno);
  *pid = cred.pid;
  return Status::ok();
}

}  // namespace braid::shm

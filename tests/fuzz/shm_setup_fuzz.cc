// The shm transport's setup messages (transports/shm/handshake.h): the Hello a
// connector sends a listener and the Reply it gets back, each one
// SOCK_SEQPACKET message carrying descriptors (SCM_RIGHTS), received by
// recvWithFds from a process that may be anyone on the host.
// Input: a control byte (bits 0-2: descriptors to pass, 0-7; bit 3: receive
// a Reply (1 descriptor allowed) instead of a Hello (2)), then the message
// (up to 256 bytes, possibly empty).
// Properties: no crash; a message is accepted only when its size is exactly
// the expected one and it carries no more descriptors than allowed, and then
// its bytes and descriptors are handed over; otherwise every descriptor it
// carried is closed (the process's open descriptors are the same after).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "fuzz_target.h"
#include "transports/shm/handshake.h"

namespace {

int openFds() {
  int n = 0;
  for (int fd = 0; fd < 1024; ++fd) n += fcntl(fd, F_GETFD) != -1 ? 1 : 0;
  return n;
}

// Sends msg with nfds descriptors (duplicates of one pipe end, closed again
// here, so only the receiver's copies stay open). False when the kernel refused.
bool sendMessage(int sock, const std::vector<uint8_t>& msg, int nfds, int fdToPass) {
  std::vector<int> fds;
  for (int i = 0; i < nfds; ++i) fds.push_back(fcntl(fdToPass, F_DUPFD_CLOEXEC, 0));
  iovec iov{const_cast<uint8_t*>(msg.data()), msg.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  if (nfds > 0) {
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * nfds);
  }
  const bool sent = sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(msg.size());
  for (int fd : fds) close(fd);
  return sent;
}

}  // namespace

BRAID_FUZZ_TARGET(shm_setup) {
  braid::fuzz::FuzzInput in(data, size);
  const uint8_t control = in.u8();
  const int nfds = control & 7;
  const bool reply = (control & 8) != 0;
  const std::vector<uint8_t> msg = in.take(256);

  const int before = openFds();
  {
    int sv[2], p[2];
    BRAID_FUZZ_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    BRAID_FUZZ_CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe");
    braid::net::Fd a(sv[0]), b(sv[1]), pr(p[0]), pw(p[1]);
    const bool sent = sendMessage(a.get(), msg, nfds, pr.get());
    const size_t expected = reply ? sizeof(braid::shm::Reply) : sizeof(braid::shm::Hello);
    const int maxFds = reply ? 1 : 2;
    std::vector<uint8_t> buf(expected);
    std::vector<braid::net::Fd> fds;
    bool got = false;
    braid::Status st = braid::shm::recvWithFds(b.get(), buf.data(), expected, maxFds, &fds, &got);
    if (!sent) {
      BRAID_FUZZ_CHECK(!got, "nothing sent, nothing received");
    } else if (msg.size() == expected && nfds <= maxFds) {
      BRAID_FUZZ_CHECK(st.isOk() && got, "a well-formed message is accepted");
      BRAID_FUZZ_CHECK(std::memcmp(buf.data(), msg.data(), expected) == 0, "with its bytes");
      BRAID_FUZZ_CHECK(fds.size() == static_cast<size_t>(nfds), "and its descriptors");
    } else {
      BRAID_FUZZ_CHECK(!got && fds.empty(), "a malformed message is refused");
      BRAID_FUZZ_CHECK(!st.isOk(), "with an error");
    }
  }
  BRAID_FUZZ_CHECK(openFds() == before, "every descriptor received is closed or handed over");
  return 0;
}

// recvWithFds, the shm setup messages' receiver: whatever a peer sends, every
// descriptor it passed is either handed to the caller or closed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "transports/shm/handshake.h"

namespace {

using braid::net::Fd;

// Is fd open in this process?
bool isOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

struct Pair {
  Fd a, b;
  Pair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    a.reset(sv[0]), b.reset(sv[1]);
  }
};

// Sends `size` bytes with nfds fresh descriptors (pipes' read ends) and
// returns the numbers they will get on the receiving side: the lowest free
// ones once ours are closed, which recvWithFds must close again on errors.
void sendWithPipes(int sock, const void* data, size_t size, int nfds) {
  std::vector<int> fds;
  for (int i = 0; i < nfds; ++i) {
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    close(p[1]);
    fds.push_back(p[0]);
  }
  // sendWithFds refuses a short write; a zero-byte message goes by hand.
  iovec iov{const_cast<void*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * nfds);
  }
  ASSERT_EQ(sendmsg(sock, &msg, MSG_NOSIGNAL), static_cast<ssize_t>(size));
  for (int fd : fds) close(fd);
}

// The number of open descriptors of this process.
int openFds() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) n += isOpen(fd) ? 1 : 0;
  return n;
}

TEST(ShmSetupMessage, ExactMessageHandsOverItsDescriptors) {
  Pair p;
  uint64_t out = 0x1122334455667788, in = 0;
  sendWithPipes(p.a.get(), &out, sizeof(out), 2);
  std::vector<Fd> fds;
  bool got = false;
  ASSERT_TRUE(braid::shm::recvWithFds(p.b.get(), &in, sizeof(in), 2, &fds, &got).isOk());
  EXPECT_TRUE(got);
  EXPECT_EQ(in, out);
  ASSERT_EQ(fds.size(), 2u);
  EXPECT_TRUE(isOpen(fds[0].get()) && isOpen(fds[1].get()));
}

TEST(ShmSetupMessage, MalformedMessagesLeakNoDescriptor) {
  struct Case {
    const char* what;
    size_t bytes;
    int nfds;
  };
  for (Case c : {Case{"zero bytes with descriptors", 0, 2}, Case{"short", 4, 2}, Case{"long", 16, 1},
                 Case{"too many descriptors", 8, 3}}) {
    SCOPED_TRACE(c.what);
    Pair p;
    const int before = openFds();
    uint8_t buf[16] = {};
    sendWithPipes(p.a.get(), buf, c.bytes, c.nfds);
    std::vector<Fd> fds;
    bool got = false;
    uint64_t in = 0;
    braid::Status st = braid::shm::recvWithFds(p.b.get(), &in, sizeof(in), 2, &fds, &got);
    EXPECT_EQ(st.code(), braid::Code::kRemoteError) << st.message();
    EXPECT_FALSE(got);
    EXPECT_TRUE(fds.empty());
    EXPECT_EQ(openFds(), before) << "a descriptor the peer passed stayed open";
  }
}

TEST(ShmSetupMessage, ClosedPeerAndSilence) {
  Pair p;
  std::vector<Fd> fds;
  bool got = true;
  uint64_t in = 0;
  ASSERT_TRUE(braid::shm::recvWithFds(p.b.get(), &in, sizeof(in), 2, &fds, &got).isOk());
  EXPECT_FALSE(got);  // nothing yet
  p.a.reset();
  braid::Status st = braid::shm::recvWithFds(p.b.get(), &in, sizeof(in), 2, &fds, &got);
  EXPECT_EQ(st.code(), braid::Code::kRemoteError);
  EXPECT_EQ(st.message(), "closed");
}

}  // namespace

// Connections that do not prove the secret are dropped (and logged) by the
// listener, which keeps serving genuine peers; the stranger learns nothing and
// gets no descriptor.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "shm_test_util.h"
#include "transports/shm/handshake.h"

namespace braid::transport {
namespace {

using namespace testing;

// A raw client of the listener's abstract socket, as a stranger would write it.
net::Fd rawConnect(const Handle& handle) {
  shm::HandleInfo info;
  EXPECT_TRUE(shm::decodeHandle(handle, &info));
  std::string path = shm::describe(info.name);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, path.data(), path.size());
  net::Fd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + path.size());
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
  return fd;
}

// True once the listener closed the stranger's socket.
bool closedByListener(int fd) {
  pollfd p{fd, POLLIN, 0};
  char byte;
  return poll(&p, 1, 0) == 1 && recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

TEST(ShmStrangers, WrongSecretIsRefusedAndGenuinePeerStillConnects) {
  auto listenerSide = makeShm(shmOptions(1)), stranger = makeShm(shmOptions(2)), genuine = makeShm(shmOptions(1));
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(listenerSide->listen(0, &handle, &listener).isOk());
  std::unique_ptr<SendComm> strangerComm;
  std::unique_ptr<RecvComm> accepted;
  Status st;
  Deadline deadline(5000);
  while (st.isOk() && !deadline.expired()) {
    st = stranger->connect(0, handle, 9, &strangerComm);
    ASSERT_TRUE(listenerSide->accept(*listener, &accepted, nullptr).isOk());
    ASSERT_EQ(accepted, nullptr) << "a connection without the secret was accepted";
    ASSERT_TRUE(stranger->wait(1).isOk());
  }
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_NE(st.message().find("without accepting it"), std::string::npos) << st.message();
  EXPECT_EQ(strangerComm, nullptr);

  std::unique_ptr<SendComm> sendComm;
  uint64_t id = 0;
  st = connectPair(*genuine, *listenerSide, 5, &sendComm, &accepted, &id);
  // connectPair listens anew; the old listener must still work too:
  ASSERT_TRUE(st.isOk()) << st.message();
  std::unique_ptr<SendComm> second;
  std::unique_ptr<RecvComm> secondAccepted;
  deadline = Deadline(5000);
  while (!(second && secondAccepted) && !deadline.expired()) {
    if (!second) {
      ASSERT_TRUE(genuine->connect(0, handle, 6, &second).isOk());
    }
    if (!secondAccepted) {
      ASSERT_TRUE(listenerSide->accept(*listener, &secondAccepted, &id).isOk());
    }
    ASSERT_TRUE(genuine->wait(1).isOk());
  }
  ASSERT_TRUE(second && secondAccepted);
  EXPECT_EQ(id, 6u);
}

TEST(ShmStrangers, GarbageAndSilenceAreDroppedWithoutDelayingGenuinePeers) {
  auto listenerSide = makeShm(shmOptions(1, 300)), genuine = makeShm(shmOptions(1));
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(listenerSide->listen(0, &handle, &listener).isOk());
  net::Fd silent = rawConnect(handle), garbage = rawConnect(handle);
  char junk[56];
  std::memset(junk, 0x5a, sizeof(junk));  // hello-sized, but no braid hello
  ASSERT_EQ(send(garbage.get(), junk, sizeof(junk), 0), static_cast<ssize_t>(sizeof(junk)));
  net::Fd shortOne = rawConnect(handle);
  ASSERT_EQ(send(shortOne.get(), junk, 7, 0), 7);

  // The genuine peer gets through while the silent stranger is still pending.
  std::unique_ptr<SendComm> sendComm;
  std::unique_ptr<RecvComm> accepted;
  Deadline deadline(5000);
  while (!(sendComm && accepted) && !deadline.expired()) {
    if (!sendComm) {
      ASSERT_TRUE(genuine->connect(0, handle, 3, &sendComm).isOk());
    }
    if (!accepted) {
      ASSERT_TRUE(listenerSide->accept(*listener, &accepted, nullptr).isOk());
    }
    ASSERT_TRUE(listenerSide->wait(1).isOk());
  }
  ASSERT_TRUE(sendComm && accepted);
  EXPECT_TRUE(closedByListener(garbage.get()));
  EXPECT_TRUE(closedByListener(shortOne.get()));

  // The silent one goes after the handshake timeout (300 ms), and nothing else is accepted.
  deadline = Deadline(5000);
  while (!closedByListener(silent.get()) && !deadline.expired()) {
    std::unique_ptr<RecvComm> extra;
    ASSERT_TRUE(listenerSide->accept(*listener, &extra, nullptr).isOk());
    ASSERT_EQ(extra, nullptr);
    ASSERT_TRUE(listenerSide->wait(50).isOk());
  }
  EXPECT_TRUE(closedByListener(silent.get()));
}

}  // namespace
}  // namespace braid::transport

// The shm transport between two real processes (fork): data of every size over
// cross-memory attach and over the forced ring fallback, and peers that die.
// Each child has an outer time limit (alarm) and reports through its exit code.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>

#include "base/shareable_memory.h"
#include "shm_test_util.h"
#include "transports/shm/shm_comm.h"

namespace braid::transport {
namespace {

using namespace testing;

constexpr int kChildLimitS = 30;

pid_t forkChild(const std::function<int()>& body) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(kChildLimitS);
    _exit(body());
  }
  return pid;
}

// The child's exit code, or -1 (it was killed, or overran timeoutMs and got killed).
int waitChild(pid_t pid, int timeoutMs = 20000) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    if (poll(&p, 1, timeoutMs) == 0) kill(pid, SIGKILL);
    close(pidfd);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Child side helpers: print why, return an exit code.
int fail(const char* what, const Status& st) {
  std::fprintf(stderr, "child: %s: %s\n", what, st.message().c_str());
  return 1;
}

Status finish(Transport& t, Request* req, size_t* size = nullptr) {
  Deadline deadline(15000);
  for (bool done = false;;) {
    BRAID_RETURN_IF_ERROR(t.test(req, &done, size));
    if (done) return Status::ok();
    if (deadline.expired()) return timeoutError("request did not finish");
    BRAID_RETURN_IF_ERROR(t.wait(100));
  }
}

Status connectTo(Transport& t, const Handle& h, std::unique_ptr<SendComm>* comm) {
  Deadline deadline(10000);
  while (!*comm) {
    BRAID_RETURN_IF_ERROR(t.connect(0, h, 1, comm));
    if (deadline.expired()) return timeoutError("connect");
    BRAID_RETURN_IF_ERROR(t.wait(10));
  }
  return Status::ok();
}

Status acceptFrom(Transport& t, ListenComm& l, std::unique_ptr<RecvComm>* comm) {
  Deadline deadline(10000);
  while (!*comm) {
    BRAID_RETURN_IF_ERROR(t.accept(l, comm, nullptr));
    if (deadline.expired()) return timeoutError("accept");
    BRAID_RETURN_IF_ERROR(t.wait(10));
  }
  return Status::ok();
}

std::vector<size_t> processSizes() {
  std::vector<size_t> sizes = testSizes();
  for (int i = 0; i < 100; ++i) sizes.push_back(static_cast<size_t>(i * 13));  // many small ones in order
  return sizes;
}

struct Paths {
  const char* name;
  bool senderCma, receiverCma;
};

class ShmProcesses : public ::testing::TestWithParam<Paths> {};

TEST_P(ShmProcesses, EverySizeArrivesIntact) {
  auto receiver = makeShm(shmOptions(), shmConfig(GetParam().receiverCma));
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  std::vector<size_t> sizes = processSizes();
  pid_t child = forkChild([&] {
    auto sender = makeShm(shmOptions(), shmConfig(GetParam().senderCma));
    std::unique_ptr<SendComm> comm;
    Status st = connectTo(*sender, handle, &comm);
    if (!st.isOk()) return fail("connect", st);
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<uint8_t> out = pattern(sizes[i], static_cast<uint32_t>(i));
      Request* req = nullptr;
      st = comm->isend(out.data(), out.size(), static_cast<uint32_t>(i), nullptr, &req);
      if (st.isOk()) st = finish(*sender, req);
      if (!st.isOk()) return fail("send", st);
    }
    return 0;
  });
  ASSERT_GT(child, 0);
  std::unique_ptr<RecvComm> comm;
  Status st = acceptFrom(*receiver, *listener, &comm);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(dynamic_cast<shm::ShmRecvComm*>(comm.get())->usesCma(), GetParam().senderCma && GetParam().receiverCma);
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<uint8_t> in(sizes[i] + 1);
    Request* req = nullptr;
    size_t size = 0;
    ASSERT_TRUE(comm->irecv(in.data(), in.size(), static_cast<uint32_t>(i), nullptr, &req).isOk());
    st = finish(*receiver, req, &size);
    ASSERT_TRUE(st.isOk()) << "message " << i << ": " << st.message();
    ASSERT_EQ(size, sizes[i]);
    in.pop_back();
    ASSERT_EQ(in, pattern(sizes[i], static_cast<uint32_t>(i))) << "message " << i;
  }
  EXPECT_EQ(waitChild(child), 0);
}

INSTANTIATE_TEST_SUITE_P(Paths, ShmProcesses,
                         ::testing::Values(Paths{"Cma", true, true}, Paths{"SenderForcesRing", false, true},
                                           Paths{"ReceiverForcesRing", true, false}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ShmPeerDeath, ReceiverSeesSenderExit) {
  auto receiver = makeShm();
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  pid_t child = forkChild([&] {
    auto sender = makeShm();
    std::unique_ptr<SendComm> comm;
    Status st = connectTo(*sender, handle, &comm);
    if (!st.isOk()) return fail("connect", st);
    raise(SIGKILL);  // dies without closing anything
    return 2;
  });
  ASSERT_GT(child, 0);
  std::unique_ptr<RecvComm> comm;
  ASSERT_TRUE(acceptFrom(*receiver, *listener, &comm).isOk());
  uint64_t back = 0;
  Request* req = nullptr;
  ASSERT_TRUE(comm->irecv(&back, sizeof(back), 1, nullptr, &req).isOk());
  Status st = finish(*receiver, req);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("peer process " + std::to_string(child) + " exited"), std::string::npos)
      << st.message();
  EXPECT_EQ(waitChild(child), -1);
}

// The sender writes its last message and dies between the receiver's
// progress, which found nothing, and its liveness check, which finds the
// sender gone: the message is received all the same, not lost to "exited".
TEST(ShmPeerDeath, AMessageWrittenJustBeforeTheSenderDiedIsReceived) {
  auto receiver = makeShm();
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = forkChild([&] {
    close(go[1]);
    auto sender = makeShm();
    std::unique_ptr<SendComm> comm;
    Status st = connectTo(*sender, handle, &comm);
    if (!st.isOk()) return fail("connect", st);
    char byte = 0;
    if (read(go[0], &byte, 1) != 1) return 3;
    uint64_t word = 0x5eed;
    Request* req = nullptr;
    st = comm->isend(&word, sizeof(word), 1, nullptr, &req);
    if (st.isOk()) st = finish(*sender, req);
    if (!st.isOk()) return fail("send", st);
    raise(SIGKILL);  // dies with its message in the ring, closing nothing
    return 2;
  });
  ASSERT_GT(child, 0);
  close(go[0]);
  std::unique_ptr<RecvComm> comm;
  ASSERT_TRUE(acceptFrom(*receiver, *listener, &comm).isOk());
  uint64_t back = 0;
  Request* req = nullptr;
  ASSERT_TRUE(comm->irecv(&back, sizeof(back), 1, nullptr, &req).isOk());
  bool died = false;
  dynamic_cast<shm::ShmRecvComm*>(comm.get())->runAfterNextEmptyProgressForTest([&] {
    const char byte = 1;
    if (write(go[1], &byte, 1) != 1) return;
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
    if (pidfd < 0) return;
    pollfd p{pidfd, POLLIN, 0};
    died = poll(&p, 1, 10000) == 1;  // the child's own alarm bounds this too
    close(pidfd);
  });
  Status st = finish(*receiver, req);
  EXPECT_TRUE(died);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(back, 0x5eedu);
  close(go[1]);
  EXPECT_EQ(waitChild(child), -1);
}

class ShmSenderSeesDeath : public ::testing::TestWithParam<bool> {};

TEST_P(ShmSenderSeesDeath, WhileItsMessageIsPending) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = forkChild([&] {
    close(fds[0]);
    auto receiver = makeShm(shmOptions(), shmConfig(GetParam()));
    Handle handle;
    std::unique_ptr<ListenComm> listener;
    Status st = receiver->listen(0, &handle, &listener);
    if (!st.isOk()) return fail("listen", st);
    if (write(fds[1], handle.bytes.data(), handle.bytes.size()) != static_cast<ssize_t>(handle.bytes.size())) return 3;
    std::unique_ptr<RecvComm> comm;
    st = acceptFrom(*receiver, *listener, &comm);
    if (!st.isOk()) return fail("accept", st);
    raise(SIGKILL);  // never receives
    return 2;
  });
  ASSERT_GT(child, 0);
  close(fds[1]);
  Handle handle;
  ASSERT_EQ(read(fds[0], handle.bytes.data(), handle.bytes.size()), static_cast<ssize_t>(handle.bytes.size()));
  close(fds[0]);
  auto sender = makeShm(shmOptions(), shmConfig(GetParam()));
  std::unique_ptr<SendComm> comm;
  Status st = connectTo(*sender, handle, &comm);
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<uint8_t> out(16 << 20);  // over the CMA threshold, and more than the ring holds
  Request* req = nullptr;
  ASSERT_TRUE(comm->isend(out.data(), out.size(), 1, nullptr, &req).isOk());
  st = finish(*sender, req);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("peer process " + std::to_string(child) + " exited"), std::string::npos)
      << st.message();
  EXPECT_EQ(waitChild(child), -1);
}

// The kernel, not a switch, refuses cross-memory attach: a receiver running as
// another (unprivileged) user may not read the sender's memory (EPERM). The
// connection notices at setup and streams everything through the ring.
TEST(ShmCmaRefused, FallsBackToTheRingPerConnection) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the receiver as another user";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<size_t> sizes = testSizes();
  pid_t child = forkChild([&] {
    close(fds[0]);
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) return 4;  // nobody
    auto receiver = makeShm();
    Handle handle;
    std::unique_ptr<ListenComm> listener;
    Status st = receiver->listen(0, &handle, &listener);
    if (!st.isOk()) return fail("listen", st);
    if (write(fds[1], handle.bytes.data(), handle.bytes.size()) != static_cast<ssize_t>(handle.bytes.size())) return 3;
    std::unique_ptr<RecvComm> comm;
    st = acceptFrom(*receiver, *listener, &comm);
    if (!st.isOk()) return fail("accept", st);
    if (dynamic_cast<shm::ShmRecvComm*>(comm.get())->usesCma()) return 5;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<uint8_t> in(sizes[i]);
      Request* req = nullptr;
      st = comm->irecv(in.data(), in.size(), 1, nullptr, &req);
      if (st.isOk()) st = finish(*receiver, req);
      if (!st.isOk()) return fail("receive", st);
      if (in != pattern(sizes[i], static_cast<uint32_t>(i))) return 6;
    }
    return 0;
  });
  ASSERT_GT(child, 0);
  close(fds[1]);
  Handle handle;
  ASSERT_EQ(read(fds[0], handle.bytes.data(), handle.bytes.size()), static_cast<ssize_t>(handle.bytes.size()));
  close(fds[0]);
  auto sender = makeShm();
  std::unique_ptr<SendComm> comm;
  Status st = connectTo(*sender, handle, &comm);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_FALSE(dynamic_cast<shm::ShmSendComm*>(comm.get())->usesCma());
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<uint8_t> out = pattern(sizes[i], static_cast<uint32_t>(i));
    Request* req = nullptr;
    ASSERT_TRUE(comm->isend(out.data(), out.size(), 1, nullptr, &req).isOk());
    st = finish(*sender, req);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  EXPECT_EQ(waitChild(child), 0);
}

// Access is granted per direction: a receiver running as root may read a
// sender running as another user, which may not write into it. The sender's
// probe of the receiver fails at setup, so it never pushes and the receiver
// pulls every large message, even those it posted long before they came.
TEST(ShmPushRefused, TheReceiverPullsEverything) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the sender as another user";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<size_t> sizes = testSizes();
  auto receiver = makeShm();
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  pid_t child = forkChild([&] {
    close(fds[1]);
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) return 4;  // nobody
    auto sender = makeShm();
    std::unique_ptr<SendComm> comm;
    Status st = connectTo(*sender, handle, &comm);
    if (!st.isOk()) return fail("connect", st);
    auto* shmComm = dynamic_cast<shm::ShmSendComm*>(comm.get());
    if (!shmComm->usesCma()) return 5;
    if (shmComm->pushes()) return 6;
    char go = 0;
    if (read(fds[0], &go, 1) != 1) return 3;  // every receive is up
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<uint8_t> out = pattern(sizes[i], static_cast<uint32_t>(i));
      Request* req = nullptr;
      st = comm->isend(out.data(), out.size(), 1, nullptr, &req);
      if (st.isOk()) st = finish(*sender, req);
      if (!st.isOk()) return fail("send", st);
    }
    return shmComm->pushed() == 0 ? 0 : 7;
  });
  ASSERT_GT(child, 0);
  close(fds[0]);
  std::unique_ptr<RecvComm> comm;
  Status st = acceptFrom(*receiver, *listener, &comm);
  ASSERT_TRUE(st.isOk()) << st.message();
  auto* shmComm = dynamic_cast<shm::ShmRecvComm*>(comm.get());
  EXPECT_TRUE(shmComm->usesCma());
  std::vector<std::vector<uint8_t>> in(sizes.size());
  std::vector<Request*> reqs(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    in[i].assign(sizes[i], 0);
    ASSERT_TRUE(comm->irecv(in[i].data(), in[i].size(), 1, nullptr, &reqs[i]).isOk());
  }
  ASSERT_EQ(write(fds[1], "g", 1), 1);
  close(fds[1]);
  for (size_t i = 0; i < sizes.size(); ++i) {
    st = finish(*receiver, reqs[i]);
    ASSERT_TRUE(st.isOk()) << "message " << i << ": " << st.message();
    EXPECT_EQ(in[i], pattern(sizes[i], static_cast<uint32_t>(i))) << "message " << i;
  }
  const size_t large =
      std::count_if(sizes.begin(), sizes.end(), [](size_t s) { return s >= shmConfig().cmaThreshold; });
  EXPECT_EQ(shmComm->pulled(), large);
  EXPECT_EQ(waitChild(child), 0);
}

// A sender whose large messages lie in braidMemAlloc memory (base/
// shareable_memory.h), and that never pushes: the receiver maps the sender's
// region once and reads every large message through it, none with
// process_vm_readv; the messages that go through the ring are unchanged.
// Then the sender frees that region and sends from a new one, which the
// receiver maps in its place.
TEST(ShmShareableSender, TheReceiverReadsItsLargeMessagesThroughAMapping) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::vector<size_t> sizes = testSizes();
  const size_t largest = *std::max_element(sizes.begin(), sizes.end());
  auto receiver = makeShm();
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  pid_t child = forkChild([&] {
    close(fds[1]);
    shm::ShmConfig noPush = shmConfig();
    noPush.push = false;
    auto sender = makeShm(shmOptions(), noPush);
    std::unique_ptr<SendComm> comm;
    Status st = connectTo(*sender, handle, &comm);
    if (!st.isOk()) return fail("connect", st);
    char go = 0;
    if (read(fds[0], &go, 1) != 1) return 3;  // every receive is up
    for (int round = 0; round < 2; ++round) {
      void* buffer = nullptr;
      if (!allocateShareable(largest, &buffer).isOk()) return 4;
      for (size_t i = 0; i < sizes.size(); ++i) {
        const std::vector<uint8_t> out = pattern(sizes[i], static_cast<uint32_t>(i + round * 100));
        if (!out.empty()) std::memcpy(buffer, out.data(), out.size());
        Request* req = nullptr;
        st = comm->isend(buffer, out.size(), 1, nullptr, &req);
        if (st.isOk()) st = finish(*sender, req);
        if (!st.isOk()) return fail("send", st);
      }
      if (!freeShareable(buffer).isOk()) return 5;
    }
    return 0;
  });
  ASSERT_GT(child, 0);
  close(fds[0]);
  std::unique_ptr<RecvComm> comm;
  Status st = acceptFrom(*receiver, *listener, &comm);
  ASSERT_TRUE(st.isOk()) << st.message();
  auto* shmComm = dynamic_cast<shm::ShmRecvComm*>(comm.get());
  ASSERT_TRUE(shmComm->usesCma());
  const size_t n = sizes.size();
  std::vector<std::vector<uint8_t>> in(2 * n);
  std::vector<Request*> reqs(2 * n);
  for (size_t i = 0; i < 2 * n; ++i) {
    in[i].assign(sizes[i % n], 0);
    ASSERT_TRUE(comm->irecv(in[i].data(), in[i].size(), 1, nullptr, &reqs[i]).isOk());
  }
  ASSERT_EQ(write(fds[1], "g", 1), 1);
  close(fds[1]);
  for (size_t i = 0; i < 2 * n; ++i) {
    st = finish(*receiver, reqs[i]);
    ASSERT_TRUE(st.isOk()) << "message " << i << ": " << st.message();
    EXPECT_EQ(in[i], pattern(sizes[i % n], static_cast<uint32_t>(i % n + (i / n) * 100))) << "message " << i;
  }
  const size_t large =
      std::count_if(sizes.begin(), sizes.end(), [](size_t s) { return s >= shmConfig().cmaThreshold; });
  ASSERT_GT(large, 0u);
  EXPECT_EQ(shmComm->pulled(), 2 * large);
  EXPECT_EQ(shmComm->pulledFromMappings(), 2 * large) << "none with process_vm_readv";
  EXPECT_EQ(waitChild(child), 0);
}

INSTANTIATE_TEST_SUITE_P(CmaAndRing, ShmSenderSeesDeath, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Cma" : "RingOnly"; });

}  // namespace
}  // namespace braid::transport

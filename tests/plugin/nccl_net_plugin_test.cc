// libnccl-net-braid.so through NCCL's eyes: loaded with dlopen, driven only
// through one of its tables (ncclNetPlugin_v8 to _v11, each through NetApi),
// over each transport it offers (BRAID_NCCL_NET).
//
// The plugin is one per process and keeps the transport of its first init, so
// each test needs a process of its own, as ctest runs them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "plugin_test_util.h"

namespace braid::ncclnet::testing {
namespace {

constexpr int kTag = 7;

// nccl_net_peer in a child process: its stdout line by line, its exit status,
// both within deadlines; killed if still running when the test ends.
class PeerProcess {
 public:
  explicit PeerProcess(std::vector<std::string> args) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      std::vector<char*> argv{const_cast<char*>(BRAID_NCCL_NET_PEER_PATH)};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    out_ = out[0];
  }
  ~PeerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  bool started() const { return pid_ > 0; }

  // One line of output without its newline; "" on EOF or timeout.
  std::string readLine(int timeoutMs) {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (;;) {
      int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
              .count());
      pollfd p{out_, POLLIN, 0};
      if (left <= 0 || poll(&p, 1, left) <= 0) return "";
      char c;
      if (read(out_, &c, 1) != 1) return "";
      if (c == '\n') return line;
      line += c;
    }
  }

  // The exit status, or -1 when it has not ended within timeoutMs.
  int wait(int timeoutMs) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd < 0) return -1;
    pollfd p{pidfd, POLLIN, 0};
    int ready = poll(&p, 1, timeoutMs);
    close(pidfd);
    int status = 0;
    if (ready != 1 || waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

// A transport of the plugin's and a table version NCCL may load.
using PluginCase = std::tuple<std::string, int>;

class NcclNetPlugin : public ::testing::TestWithParam<PluginCase> {
 protected:
  void SetUp() override {
    static std::string initializedFor;
    if (!initializedFor.empty() && initializedFor != transport())
      GTEST_SKIP() << "the plugin was initialized over " << initializedFor
                   << " earlier in this process; run each test alone, as ctest does";
    setenv("BRAID_NCCL_NET", transport(), 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
    std::string error;
    net_ = loadPlugin(std::get<1>(GetParam()), &error);
    ASSERT_NE(net_, nullptr) << error;
    ASSERT_EQ(net_->init(recordingLogger), ncclSuccess) << describeLog();
    initializedFor = transport();
  }
  static const char* transport() { return std::get<0>(GetParam()).c_str(); }
  static int version() { return std::get<1>(GetParam()); }

  static std::string describeLog() {
    std::string out;
    for (const LogLine& l : loggedLines()) out += l.text + "\n";
    return out;
  }

  // A connected pair on device 0, both ends in this process.
  struct Link {
    void* listen = nullptr;
    void* send = nullptr;
    void* recv = nullptr;
  };
  Link connect() {
    Link link;
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    EXPECT_EQ(net_->listen(0, handle, &link.listen), ncclSuccess) << lastWarning();
    EXPECT_EQ(establish(*net_, handle, &link.send, link.listen, &link.recv), ncclSuccess) << lastWarning();
    return link;
  }
  void close(Link& link) {
    if (link.send) {
      EXPECT_EQ(net_->closeSend(link.send), ncclSuccess);
    }
    if (link.recv) {
      EXPECT_EQ(net_->closeRecv(link.recv), ncclSuccess);
    }
    if (link.listen) {
      EXPECT_EQ(net_->closeListen(link.listen), ncclSuccess);
    }
    link = {};
  }

  Op postSend(void* comm, void* data, size_t size, int tag, void* mhandle = nullptr) {
    Op op;
    op.result = net_->isend(comm, data, size, tag, mhandle, &op.request);
    EXPECT_EQ(op.result, ncclSuccess) << lastWarning();
    EXPECT_NE(op.request, nullptr);
    return op;
  }
  Op postRecv(void* comm, void* data, size_t capacity, int tag, void* mhandle = nullptr) {
    Op op;
    op.result = net_->irecv(comm, 1, &data, &capacity, &tag, &mhandle, &op.request);
    EXPECT_EQ(op.result, ncclSuccess) << lastWarning();
    EXPECT_NE(op.request, nullptr);
    return op;
  }

  NetApi* net_ = nullptr;
};

TEST_P(NcclNetPlugin, DescribesHostMemoryDevices) {
  EXPECT_STREQ(net_->name(), "braid");
  int ndev = 0;
  ASSERT_EQ(net_->devices(&ndev), ncclSuccess);
  ASSERT_EQ(ndev, 1);  // BRAID_SOCKET_IFNAME=lo
  ncclNetProperties_v11_t props;
  ASSERT_EQ(net_->getProperties(0, &props), ncclSuccess);
  EXPECT_STREQ(props.name, "lo");
  EXPECT_EQ(props.pciPath, nullptr);  // loopback is virtual
  EXPECT_EQ(props.guid, 0u);
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST);
  EXPECT_GT(props.speed, 0);
  EXPECT_EQ(props.maxRecvs, 1);
  EXPECT_EQ(props.latency, 0.0f);  // as NCCL's own transports
  EXPECT_GT(props.maxComms, 0);
  EXPECT_EQ(props.netDeviceType, NCCL_NET_DEVICE_HOST);
  // What v9 on say, and what NCCL assumes of a v8 plugin: a physical device
  // taking 1 GiB transfers, one request at a time, with no flush.
  EXPECT_EQ(props.forceFlush, 0);
  EXPECT_EQ(props.vProps.ndevs, 1);
  EXPECT_EQ(props.vProps.devs[0], 0);
  EXPECT_EQ(props.maxP2pBytes, size_t{1} << 30);
  EXPECT_EQ(props.maxCollBytes, size_t{1} << 29);
  EXPECT_EQ(props.maxMultiRequestSize, 1);
  EXPECT_NE(net_->getProperties(1, &props), ncclSuccess);
  EXPECT_NE(lastWarning().find("device 1 out of range"), std::string::npos) << lastWarning();
  // init said which transport and device it took.
  EXPECT_NE(describeLog().find(std::string("device 0: lo over ") + transport()), std::string::npos)
      << describeLog();
}

// Receives are posted larger than the sends, as NCCL does, and report the
// bytes that came.
TEST_P(NcclNetPlugin, MovesEverySizeInOrderIntoLargerBuffers) {
  Link link = connect();
  ASSERT_TRUE(link.send && link.recv);
  const std::vector<size_t> sizes = {0, 1, 3, 4096, 65537, 1 << 20, 8 << 20};
  const size_t capacity = (8 << 20) + 64;
  std::vector<std::vector<uint8_t>> sent, got;
  void* sendMr = nullptr;
  void* recvMr = nullptr;
  std::vector<Op> ops;
  ops.reserve(2 * sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    sent.push_back(pattern(sizes[i], static_cast<uint32_t>(i)));
    got.emplace_back(capacity, 0xee);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_EQ(net_->regMr(link.send, sent[i].data(), sent[i].size(), NCCL_PTR_HOST, &sendMr), ncclSuccess);
    ASSERT_EQ(net_->regMr(link.recv, got[i].data(), got[i].size(), NCCL_PTR_HOST, &recvMr), ncclSuccess);
    ops.push_back(postRecv(link.recv, got[i].data(), capacity, kTag, recvMr));
    ops.push_back(postSend(link.send, sent[i].data(), sizes[i], kTag, sendMr));
    std::vector<Op*> both{&ops[ops.size() - 2], &ops.back()};
    ASSERT_TRUE(driveAll(*net_, both));
    EXPECT_EQ(net_->deregMr(link.send, sendMr), ncclSuccess);
    EXPECT_EQ(net_->deregMr(link.recv, recvMr), ncclSuccess);
    for (Op* op : both) {
      EXPECT_EQ(op->result, ncclSuccess) << lastWarning();
      EXPECT_EQ(op->size, static_cast<int>(sizes[i]));
    }
    EXPECT_TRUE(std::equal(sent[i].begin(), sent[i].end(), got[i].begin()))
        << "message of " << sizes[i] << " bytes";
    EXPECT_EQ(got[i][sizes[i]], 0xee) << "bytes past the message were written";
  }
  close(link);
}

// NCCL keeps up to NCCL_NET_MAX_REQUESTS (32) in flight per comm, and more on
// a sender when the receiver groups; sends here go out before any receive.
TEST_P(NcclNetPlugin, KeepsManyRequestsInFlightInOrder) {
  Link link = connect();
  ASSERT_TRUE(link.send && link.recv);
  constexpr int kCount = 64, kSize = 65536;
  std::vector<std::vector<uint8_t>> sent, got(kCount, std::vector<uint8_t>(kSize));
  std::vector<Op> sends, recvs;
  for (int i = 0; i < kCount; ++i) sent.push_back(pattern(kSize, i));
  for (int i = 0; i < kCount; ++i) sends.push_back(postSend(link.send, sent[i].data(), kSize, kTag));
  for (int i = 0; i < kCount; ++i) recvs.push_back(postRecv(link.recv, got[i].data(), kSize, kTag));
  std::vector<Op*> all;
  for (int i = 0; i < kCount; ++i) all.insert(all.end(), {&sends[i], &recvs[i]});
  ASSERT_TRUE(driveAll(*net_, all));
  for (int i = 0; i < kCount; ++i) {
    EXPECT_EQ(sends[i].result, ncclSuccess);
    EXPECT_EQ(recvs[i].result, ncclSuccess) << lastWarning();
    EXPECT_EQ(got[i], sent[i]) << "message " << i;
  }
  close(link);
}

// The peer is another process with its own secret: its handle carries it.
TEST_P(NcclNetPlugin, SendsToAndReceivesFromAnotherProcess) {
  constexpr int kCount = 8, kSize = 3 << 20;
  {
    PeerProcess peer({std::to_string(version()), "receive", std::to_string(kCount), std::to_string(kSize)});
    ASSERT_TRUE(peer.started());
    std::string hex = peer.readLine(20000);
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    ASSERT_TRUE(fromHex(hex, handle, sizeof(handle))) << "peer printed '" << hex << "'";
    void* send = nullptr;
    ASSERT_EQ(establish(*net_, handle, &send, nullptr, nullptr), ncclSuccess) << lastWarning();
    std::vector<std::vector<uint8_t>> msgs;
    std::vector<Op> ops;
    for (int i = 0; i < kCount; ++i) msgs.push_back(pattern(kSize, i));
    for (int i = 0; i < kCount; ++i) ops.push_back(postSend(send, msgs[i].data(), kSize, kTag));
    std::vector<Op*> all;
    for (Op& op : ops) all.push_back(&op);
    ASSERT_TRUE(driveAll(*net_, all));
    for (Op& op : ops) EXPECT_EQ(op.result, ncclSuccess) << lastWarning();
    EXPECT_EQ(peer.wait(20000), 0) << "the receiving peer found a message missing or wrong";
    EXPECT_EQ(net_->closeSend(send), ncclSuccess);
  }
  {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen = nullptr;
    ASSERT_EQ(net_->listen(0, handle, &listen), ncclSuccess);
    PeerProcess peer({std::to_string(version()), "send", toHex(handle, sizeof(handle)),
                      std::to_string(kCount), std::to_string(kSize)});
    ASSERT_TRUE(peer.started());
    void* recv = nullptr;
    ASSERT_EQ(establish(*net_, nullptr, nullptr, listen, &recv, 20000), ncclSuccess) << lastWarning();
    std::vector<std::vector<uint8_t>> got(kCount, std::vector<uint8_t>(kSize));
    std::vector<Op> ops;
    for (int i = 0; i < kCount; ++i) ops.push_back(postRecv(recv, got[i].data(), kSize, kTag));
    std::vector<Op*> all;
    for (Op& op : ops) all.push_back(&op);
    ASSERT_TRUE(driveAll(*net_, all));
    for (int i = 0; i < kCount; ++i) {
      EXPECT_EQ(ops[i].result, ncclSuccess) << lastWarning();
      EXPECT_EQ(got[i], pattern(kSize, i)) << "message " << i;
    }
    EXPECT_EQ(peer.wait(20000), 0);
    EXPECT_EQ(net_->closeRecv(recv), ncclSuccess);
    EXPECT_EQ(net_->closeListen(listen), ncclSuccess);
  }
}

// A connector that did not see the handle does not know the listener's
// secret: its connect fails, accept never returns it, and the listener still
// takes the genuine connector afterwards.
TEST_P(NcclNetPlugin, RefusesAConnectorWithoutTheSecret) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net_->listen(0, handle, &listen), ncclSuccess);
  char forged[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(forged, handle, sizeof(handle));
  forged[8] ^= 0x5a;  // a byte of the secret (plugin_handle.h)
  void* stranger = nullptr;
  void* recv = nullptr;
  ncclResult_t r = ncclSuccess;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (r == ncclSuccess && !stranger && std::chrono::steady_clock::now() < deadline) {
    r = net_->connect(0, forged, &stranger);
    ASSERT_EQ(net_->accept(listen, &recv), ncclSuccess);
    ASSERT_EQ(recv, nullptr) << "the stranger was accepted";
  }
  EXPECT_EQ(stranger, nullptr);
  EXPECT_EQ(r, ncclRemoteError) << lastWarning();
  EXPECT_NE(lastWarning().find("connect failed"), std::string::npos) << lastWarning();

  void* send = nullptr;
  ASSERT_EQ(establish(*net_, handle, &send, listen, &recv), ncclSuccess) << lastWarning();
  std::vector<uint8_t> msg = pattern(1000, 1), got(1000);
  Op s = postSend(send, msg.data(), 1000, kTag), v = postRecv(recv, got.data(), 1000, kTag);
  ASSERT_TRUE(driveAll(*net_, {&s, &v}));
  EXPECT_EQ(v.result, ncclSuccess);
  EXPECT_EQ(got, msg);
  net_->closeSend(send);
  net_->closeRecv(recv);
  net_->closeListen(listen);
}

TEST_P(NcclNetPlugin, RefusesAHandleItDidNotMake) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  for (size_t i = 0; i < sizeof(handle); ++i) handle[i] = static_cast<char>(i * 7 + 1);
  void* send = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(net_->connect(0, handle, &send), ncclInvalidUsage);
  EXPECT_EQ(send, nullptr);
  EXPECT_NE(lastWarning().find("not made by this version of braid's NCCL net plugin"), std::string::npos)
      << lastWarning();

  // A braid handle from a rank that runs over the other transport.
  void* listen = nullptr;
  ASSERT_EQ(net_->listen(0, handle, &listen), ncclSuccess);
  handle[5] = std::string(transport()) == "tcp" ? 2 : 1;  // the transport byte
  EXPECT_EQ(net_->connect(0, handle, &send), ncclInvalidUsage);
  EXPECT_NE(lastWarning().find("BRAID_NCCL_NET must be the same on every rank"), std::string::npos)
      << lastWarning();
  net_->closeListen(listen);
}

// A rank posting a different tag than its peer sent (NCCL's tag is the
// sender's rank) is named instead of taking the message.
TEST_P(NcclNetPlugin, FailsAReceiveWhoseTagDiffers) {
  Link link = connect();
  std::vector<uint8_t> msg = pattern(100, 1), got(100);
  Op s = postSend(link.send, msg.data(), 100, 3), v = postRecv(link.recv, got.data(), 100, 4);
  ASSERT_TRUE(driveAll(*net_, {&s, &v}));
  EXPECT_EQ(v.result, ncclRemoteError);
  EXPECT_NE(lastWarning().find("tag"), std::string::npos) << lastWarning();
  close(link);
}

TEST_P(NcclNetPlugin, FailsAReceiveSmallerThanTheSend) {
  Link link = connect();
  std::vector<uint8_t> msg = pattern(4096, 1), got(4096);
  Op s = postSend(link.send, msg.data(), 4096, kTag), v = postRecv(link.recv, got.data(), 100, kTag);
  ASSERT_TRUE(driveAll(*net_, {&s, &v}));
  EXPECT_EQ(v.result, ncclRemoteError);
  EXPECT_NE(lastWarning().find("too large"), std::string::npos) << lastWarning();
  close(link);
}

// Calls outside what the devices promise are refused with a reason, and
// leave the connection as it was: a correct message still goes through.
TEST_P(NcclNetPlugin, RefusesMisuseAndChangesNothing) {
  Link link = connect();
  std::vector<uint8_t> msg = pattern(256, 2), got(256);
  void* mr = nullptr;
  EXPECT_EQ(net_->regMr(link.send, msg.data(), msg.size(), NCCL_PTR_CUDA, &mr), ncclInternalError);
  EXPECT_NE(lastWarning().find("only host memory"), std::string::npos) << lastWarning();
  ASSERT_EQ(net_->regMr(link.send, msg.data(), 128, NCCL_PTR_HOST, &mr), ncclSuccess);

  void* req = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(net_->isend(link.send, msg.data(), 256, kTag, mr, &req), ncclInternalError);
  EXPECT_EQ(req, nullptr);
  EXPECT_NE(lastWarning().find("outside the memory registered"), std::string::npos) << lastWarning();
  // Over 2 GiB - 1, which test() could not report: NetApi does not hand it to
  // a v8 table (whose size is int), the newer ones refuse it.
  EXPECT_EQ(net_->isend(link.send, msg.data(), size_t{1} << 31, kTag, nullptr, &req),
            version() == 8 ? ncclInvalidArgument : ncclInternalError);

  void* bufs[2] = {got.data(), got.data()};
  size_t sizes[2] = {128, 128};
  int tags[2] = {kTag, kTag};
  EXPECT_EQ(net_->irecv(link.recv, 2, bufs, sizes, tags, nullptr, &req), ncclInternalError);
  EXPECT_NE(lastWarning().find("maxRecvs = 1"), std::string::npos) << lastWarning();
  void* listen = nullptr;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  EXPECT_NE(net_->listen(5, handle, &listen), ncclSuccess);
  EXPECT_EQ(listen, nullptr);

  Op s = postSend(link.send, msg.data(), 256, kTag), v = postRecv(link.recv, got.data(), 256, kTag);
  ASSERT_TRUE(driveAll(*net_, {&s, &v}));
  EXPECT_EQ(v.result, ncclSuccess) << lastWarning();
  EXPECT_EQ(got, msg);
  EXPECT_EQ(net_->deregMr(link.send, mr), ncclSuccess);
  close(link);
}

// NCCL drives each communicator from its own proxy thread, so calls on comms
// of one transport come from several threads at once.
TEST_P(NcclNetPlugin, TakesCallsFromSeveralThreadsAtOnce) {
  constexpr int kThreads = 3, kCount = 40, kSize = 200000;
  std::vector<Link> links;
  for (int t = 0; t < kThreads; ++t) links.push_back(connect());
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCount && failures[t].empty(); ++i) {
        std::vector<uint8_t> msg = pattern(kSize, t * 1000 + i), got(kSize);
        Op s, v;
        if (net_->irecv(links[t].recv, 1, std::vector<void*>{got.data()}.data(),
                        std::vector<size_t>{kSize}.data(), std::vector<int>{kTag}.data(), nullptr,
                        &v.request) != ncclSuccess ||
            net_->isend(links[t].send, msg.data(), kSize, kTag, nullptr, &s.request) != ncclSuccess)
          failures[t] = "posting failed: " + lastWarning();
        else if (!driveAll(*net_, {&s, &v}) || s.result != ncclSuccess || v.result != ncclSuccess)
          failures[t] = "message " + std::to_string(i) + " failed: " + lastWarning();
        else if (got != msg)
          failures[t] = "message " + std::to_string(i) + " arrived wrong";
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  for (Link& link : links) close(link);
}

// A sender that goes away fails the receive waiting on it; nothing hangs.
TEST_P(NcclNetPlugin, FailsAPendingReceiveWhenThePeerCloses) {
  Link link = connect();
  std::vector<uint8_t> got(1024);
  Op v = postRecv(link.recv, got.data(), 1024, kTag);
  ASSERT_EQ(net_->closeSend(link.send), ncclSuccess);
  link.send = nullptr;
  ASSERT_TRUE(driveAll(*net_, {&v}));
  EXPECT_EQ(v.result, ncclRemoteError) << lastWarning();
  close(link);
}

std::vector<std::string> transports() {
#ifdef BRAID_TEST_HAVE_UCX
  return {"tcp", "ucx"};
#else
  return {"tcp"};
#endif
}

// Each table NCCL may take: v11 from 2.28 on, v10 and v9 before, v8 from 2.19.
INSTANTIATE_TEST_SUITE_P(Over, NcclNetPlugin,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(11, 10, 9, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_v" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace braid::ncclnet::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return braid::ncclnet::testing::endProcess(RUN_ALL_TESTS());
}

// The fake libibverbs behaves as the verbs transport's tests assume: RC
// connections between two QPs in one process, completions only when a CQ is
// polled, and the errors real hardware reports for the mistakes a transport
// can make; and, with BRAID_FAKE_VERBS_FABRIC set, the same between
// processes. It is reached the way the transport reaches it: dlopen and dlsym.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kMaxMessageBytes = 256 * 1024;
constexpr size_t kBufferBytes = 2 * kMaxMessageBytes;
constexpr int kCqEntries = 64;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

struct Verbs {
  decltype(&ibv_get_device_list) getDeviceList;
  decltype(&ibv_free_device_list) freeDeviceList;
  decltype(&ibv_get_device_name) getDeviceName;
  decltype(&ibv_open_device) openDevice;
  decltype(&ibv_close_device) closeDevice;
  decltype(&::ibv_query_port) queryPort;  // the exported one: compat port attributes
  decltype(&ibv_alloc_pd) allocPd;
  decltype(&ibv_dealloc_pd) deallocPd;
  decltype(&ibv_reg_mr) regMr;
  decltype(&ibv_dereg_mr) deregMr;
  decltype(&ibv_create_cq) createCq;
  decltype(&ibv_destroy_cq) destroyCq;
  decltype(&ibv_create_qp) createQp;
  decltype(&ibv_modify_qp) modifyQp;
  decltype(&ibv_destroy_qp) destroyQp;
};

template <typename Fn>
void resolve(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!*fn) ADD_FAILURE() << "missing " << name;
}

const Verbs& verbs() {
  static const Verbs loaded = [] {
    void* library = dlopen(BRAID_FAKE_VERBS_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!library) std::abort();
    Verbs v{};
    resolve(library, "ibv_get_device_list", &v.getDeviceList);
    resolve(library, "ibv_free_device_list", &v.freeDeviceList);
    resolve(library, "ibv_get_device_name", &v.getDeviceName);
    resolve(library, "ibv_open_device", &v.openDevice);
    resolve(library, "ibv_close_device", &v.closeDevice);
    resolve(library, "ibv_query_port", &v.queryPort);
    resolve(library, "ibv_alloc_pd", &v.allocPd);
    resolve(library, "ibv_dealloc_pd", &v.deallocPd);
    resolve(library, "ibv_reg_mr", &v.regMr);
    resolve(library, "ibv_dereg_mr", &v.deregMr);
    resolve(library, "ibv_create_cq", &v.createCq);
    resolve(library, "ibv_destroy_cq", &v.destroyCq);
    resolve(library, "ibv_create_qp", &v.createQp);
    resolve(library, "ibv_modify_qp", &v.modifyQp);
    resolve(library, "ibv_destroy_qp", &v.destroyQp);
    return v;
  }();
  return loaded;
}

int toInit(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = kAccess;
  return verbs().modifyQp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int toRtr(ibv_qp* qp, uint32_t destQpNum, uint16_t dlid = 1) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_4096;
  attr.dest_qp_num = destQpNum;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.dlid = dlid;
  attr.ah_attr.port_num = 1;
  return verbs().modifyQp(qp, &attr,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int toRts(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.max_rd_atomic = 1;
  return verbs().modifyQp(qp, &attr,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                              IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

// Two connected QPs, side 0 and side 1, each with its own CQ and buffer.
class FakeVerbs : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    ibv_device** list = verbs().getDeviceList(&count);
    ASSERT_EQ(count, 1);
    EXPECT_STREQ(verbs().getDeviceName(list[0]), "braidfake0");
    context_ = verbs().openDevice(list[0]);
    verbs().freeDeviceList(list);
    ASSERT_NE(context_, nullptr);
    pd_ = verbs().allocPd(context_);
    ASSERT_NE(pd_, nullptr);
    for (int side : {0, 1}) {
      buffer_[side].assign(kBufferBytes, 0);
      mr_[side] = verbs().regMr(pd_, buffer_[side].data(), kBufferBytes, kAccess);
      cq_[side] = verbs().createCq(context_, kCqEntries, nullptr, nullptr, 0);
      qp_[side] = createQp(cq_[side]);
      ASSERT_TRUE(mr_[side] && cq_[side] && qp_[side]);
    }
    for (int side : {0, 1}) {
      ASSERT_EQ(toInit(qp_[side]), 0);
      ASSERT_EQ(toRtr(qp_[side], qp_[1 - side]->qp_num), 0);
      ASSERT_EQ(toRts(qp_[side]), 0);
    }
  }

  void TearDown() override {
    for (int side : {0, 1}) {
      if (qp_[side]) {
        EXPECT_EQ(verbs().destroyQp(qp_[side]), 0);
      }
      if (cq_[side]) {
        EXPECT_EQ(verbs().destroyCq(cq_[side]), 0);
      }
      if (mr_[side]) {
        EXPECT_EQ(verbs().deregMr(mr_[side]), 0);
      }
    }
    if (pd_) {
      EXPECT_EQ(verbs().deallocPd(pd_), 0);
    }
    if (context_) {
      EXPECT_EQ(verbs().closeDevice(context_), 0);
    }
  }

  ibv_qp* createQp(ibv_cq* cq) {
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 128;
    init.cap.max_recv_wr = 128;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    return verbs().createQp(pd_, &init);
  }

  int postWrite(int side, ibv_wr_opcode opcode, size_t length, uint32_t rkey, uint64_t wrId = 1) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(buffer_[side].data()), static_cast<uint32_t>(length),
                mr_[side]->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wrId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(0xC0FFEE);
    wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(buffer_[1 - side].data());
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp_[side], &wr, &bad);
  }

  int postRecv(int side, size_t length, uint64_t wrId) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(buffer_[side].data()), static_cast<uint32_t>(length),
                mr_[side]->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wrId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp_[side], &wr, &bad);
  }

  std::vector<ibv_wc> poll(int side) {
    std::vector<ibv_wc> polled(kCqEntries);
    const int n = ibv_poll_cq(cq_[side], kCqEntries, polled.data());
    polled.resize(n > 0 ? n : 0);
    return polled;
  }

  // The status of the next completion, or IBV_WC_GENERAL_ERR when none comes.
  ibv_wc_status awaitOne(int side) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<ibv_wc> polled = poll(side);
      if (!polled.empty()) return polled[0].status;
    }
    return IBV_WC_GENERAL_ERR;
  }

  void fill(int side, size_t length, uint8_t seed) {
    for (size_t i = 0; i < length; ++i) buffer_[side][i] = static_cast<uint8_t>(seed + i * 7);
  }

  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  std::vector<uint8_t> buffer_[2];
  ibv_mr* mr_[2] = {};
  ibv_cq* cq_[2] = {};
  ibv_qp* qp_[2] = {};
};

TEST_F(FakeVerbs, ConnectsOnlyThroughTheRcStateMachine) {
  EXPECT_EQ(qp_[0]->state, IBV_QPS_RTS);
  EXPECT_EQ(qp_[1]->state, IBV_QPS_RTS);
  ibv_qp* fresh = createQp(cq_[0]);
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(toRtr(fresh, qp_[0]->qp_num), EINVAL) << "RESET -> RTR skips INIT";
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  EXPECT_EQ(verbs().modifyQp(fresh, &attr, IBV_QP_STATE | IBV_QP_PORT), EINVAL) << "mask lacks bits";
  EXPECT_EQ(fresh->state, IBV_QPS_RESET);
  ASSERT_EQ(toInit(fresh), 0);
  EXPECT_EQ(toRtr(fresh, qp_[0]->qp_num, /*dlid=*/2), EINVAL);
  EXPECT_EQ(toRtr(fresh, 0xABCDE), EINVAL) << "no such QP";
  EXPECT_EQ(fresh->state, IBV_QPS_INIT);
  EXPECT_EQ(verbs().destroyCq(cq_[0]), EBUSY);
  EXPECT_EQ(verbs().destroyQp(fresh), 0);
}

TEST_F(FakeVerbs, SendLandsInThePostedRecv) {
  ASSERT_EQ(postRecv(1, 4096, 7), 0);
  fill(0, 100, 3);
  ASSERT_EQ(postWrite(0, IBV_WR_SEND, 100, 0, 8), 0);
  std::vector<ibv_wc> received = poll(1);
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(received[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(received[0].wr_id, 7u);
  EXPECT_EQ(received[0].byte_len, 100u);
  EXPECT_EQ(received[0].src_qp, qp_[0]->qp_num);
  EXPECT_EQ(std::memcmp(buffer_[0].data(), buffer_[1].data(), 100), 0);
  std::vector<ibv_wc> sent = poll(0);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(sent[0].wr_id, 8u);
}

TEST_F(FakeVerbs, WriteWithImmFillsTheRemoteBufferAndConsumesARecv) {
  ASSERT_EQ(postRecv(1, 0, 9), 0);
  fill(0, 1000, 5);
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE_WITH_IMM, 1000, mr_[1]->rkey), 0);
  std::vector<ibv_wc> received = poll(1);
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(received[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_TRUE(received[0].wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(received[0].imm_data, htonl(0xC0FFEE));
  EXPECT_EQ(received[0].byte_len, 1000u);
  EXPECT_EQ(std::memcmp(buffer_[0].data(), buffer_[1].data(), 1000), 0);
}

TEST_F(FakeVerbs, WriteWithABadRkeyFailsBothEnds) {
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, 64, mr_[1]->lkey), 0) << "an lkey is no rkey";
  std::vector<ibv_wc> sent = poll(0);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(qp_[0]->state, IBV_QPS_ERR);
  EXPECT_EQ(qp_[1]->state, IBV_QPS_ERR);
}

TEST_F(FakeVerbs, NothingCompletesBeforeAPoll) {
  fill(0, 4096, 11);
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, 4096, mr_[1]->rkey), 0);
  EXPECT_EQ(buffer_[1][1], 0) << "written at post time";
  ASSERT_EQ(poll(0).size(), 1u);
  EXPECT_EQ(std::memcmp(buffer_[0].data(), buffer_[1].data(), 4096), 0);
}

TEST_F(FakeVerbs, SendWaitsForARecv) {
  ASSERT_EQ(postWrite(0, IBV_WR_SEND, 10, 0), 0);
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, 10, mr_[1]->rkey, 2), 0);
  EXPECT_TRUE(poll(0).empty()) << "the write overtook the waiting send";
  EXPECT_TRUE(poll(1).empty());
  ASSERT_EQ(postRecv(1, 10, 3), 0);
  EXPECT_EQ(poll(1).size(), 1u);
  std::vector<ibv_wc> sent = poll(0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(sent[1].wr_id, 2u);
}

TEST_F(FakeVerbs, WriteLongerThanMaxMsgSizeFails) {
  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(context_, 1, reinterpret_cast<_compat_ibv_port_attr*>(&port)), 0);
  ASSERT_EQ(port.max_msg_sz, kMaxMessageBytes);
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, kMaxMessageBytes, mr_[1]->rkey), 0);
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, kMaxMessageBytes + 1, mr_[1]->rkey), 0);
  std::vector<ibv_wc> sent = poll(0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(sent[1].status, IBV_WC_LOC_LEN_ERR);
}

TEST_F(FakeVerbs, SendToADestroyedPeerExceedsRetries) {
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, 8, mr_[1]->rkey, 1), 0);
  ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, 8, mr_[1]->rkey, 2), 0);
  ASSERT_EQ(verbs().destroyQp(qp_[1]), 0);
  qp_[1] = nullptr;
  std::vector<ibv_wc> sent = poll(0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(sent[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(qp_[0]->state, IBV_QPS_ERR);
}

TEST_F(FakeVerbs, OverrunningACqBreaksItForGood) {
  for (int i = 0; i <= kCqEntries; ++i) ASSERT_EQ(postWrite(0, IBV_WR_RDMA_WRITE, 0, 0), 0);
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(cq_[0], 1, &wc), -1);
  EXPECT_EQ(ibv_poll_cq(cq_[0], 1, &wc), -1);
}

TEST_F(FakeVerbs, BothEndsRunOnTheirOwnThreads) {
  constexpr int kMessages = 300;
  std::thread receiver([this] {
    for (int i = 0; i < kMessages; ++i) {
      EXPECT_EQ(postRecv(1, 8, i), 0);
      EXPECT_EQ(awaitOne(1), IBV_WC_SUCCESS);
    }
  });
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_EQ(postWrite(0, IBV_WR_SEND, 8, 0), 0);
    EXPECT_EQ(awaitOne(0), IBV_WC_SUCCESS);
  }
  receiver.join();
}

TEST(FakeVerbsDevices, CanBeConfiguredAway) {
  setenv("BRAID_FAKE_VERBS_DEVICES", "0", 1);
  int count = -1;
  ibv_device** list = verbs().getDeviceList(&count);
  unsetenv("BRAID_FAKE_VERBS_DEVICES");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(list[0], nullptr);
  verbs().freeDeviceList(list);
}

// The shared fabric. Each case runs its processes as forked children of the
// test process, which never sets BRAID_FAKE_VERBS_FABRIC itself: the library
// forgets its fabric in a forked child, so a child that sets the variable
// opens the shared one even when the test process used the library in-process.
// Every child has an alarm and every wait a deadline, so a hang fails fast.

constexpr int kChildSeconds = 30;
constexpr size_t kRegions = 3;  // what is sent, where a SEND lands, where a write lands

std::string freshFabricName() {
  static int made = 0;
  return "/braid-fake-verbs-selftest-" + std::to_string(getpid()) + "-" + std::to_string(++made);
}

// Runs body in a forked child that names the fabric; it exits 0 when no
// expectation failed.
template <typename Body>
pid_t spawn(const std::string& fabricName, Body body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  alarm(kChildSeconds);
  setenv("BRAID_FAKE_VERBS_FABRIC", fabricName.c_str(), 1);
  body();
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(::testing::Test::HasFailure() ? 1 : 0);
}

// The child's exit status, or -1 after killing one that overstayed.
int awaitChild(pid_t pid, int seconds = kChildSeconds + 5) {
  if (pid < 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// One direction of a pipe between two children; each keeps the end it uses.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(pipe(fds), 0); }
  ~Pipe() { closeBoth(); }
  void closeBoth() {
    for (int& fd : fds) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }
  template <typename T>
  bool put(const T& value) {
    return write(fds[1], &value, sizeof(value)) == static_cast<ssize_t>(sizeof(value));
  }
  template <typename T>
  bool get(T* value) {
    return read(fds[0], value, sizeof(*value)) == static_cast<ssize_t>(sizeof(*value));
  }
};

// What a peer needs to reach this end.
struct Address {
  uint32_t qpNum = 0;
  uint32_t rkey = 0;
  uint64_t writeRegion = 0;
};

uint8_t pattern(int side, size_t i) { return static_cast<uint8_t>(side * 131 + i * 7 + i / 251); }

// One process's end of a connection: device, PD, one MR over three regions,
// one CQ and one QP, moved to INIT.
struct Endpoint {
  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  ibv_mr* mr = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(kRegions * kMaxMessageBytes, 0);

  uint8_t* region(size_t i) { return buffer.data() + i * kMaxMessageBytes; }
  uint64_t address(size_t i) { return reinterpret_cast<uintptr_t>(region(i)); }

  bool open() {
    int count = 0;
    ibv_device** list = verbs().getDeviceList(&count);
    if (!list || count != 1) return ADD_FAILURE() << "no device", false;
    context = verbs().openDevice(list[0]);
    verbs().freeDeviceList(list);
    pd = context ? verbs().allocPd(context) : nullptr;
    mr = pd ? verbs().regMr(pd, buffer.data(), buffer.size(), kAccess) : nullptr;
    cq = context ? verbs().createCq(context, kCqEntries, nullptr, nullptr, 0) : nullptr;
    if (!mr || !cq) return ADD_FAILURE() << "no MR or CQ", false;
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap = {128, 36, 1, 1, 0};
    qp = verbs().createQp(pd, &init);
    if (!qp) return ADD_FAILURE() << "no QP", false;
    return toInit(qp) == 0;
  }

  Address address() { return {qp->qp_num, mr->rkey, address(2)}; }

  bool connect(const Address& peer) { return toRtr(qp, peer.qpNum) == 0 && toRts(qp) == 0; }

  int post(ibv_wr_opcode opcode, size_t length, const Address& peer, uint64_t wrId, uint32_t imm = 0) {
    ibv_sge sge{address(0), static_cast<uint32_t>(length), mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wrId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm);
    wr.wr.rdma.remote_addr = peer.writeRegion;
    wr.wr.rdma.rkey = peer.rkey;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp, &wr, &bad);
  }

  int postRecv(uint64_t wrId, size_t region, size_t length) {
    ibv_sge sge{address(region), static_cast<uint32_t>(length), mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wrId;
    wr.sg_list = &sge;
    wr.num_sge = length ? 1 : 0;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp, &wr, &bad);
  }

  // Polls until `want` completions came or the deadline passed.
  std::vector<ibv_wc> await(size_t want, std::chrono::milliseconds within = std::chrono::seconds(10)) {
    std::vector<ibv_wc> got;
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
      ibv_wc wc[kCqEntries];
      const int n = ibv_poll_cq(cq, kCqEntries, wc);
      if (n < 0) return ADD_FAILURE() << "CQ overrun", got;
      got.insert(got.end(), wc, wc + n);
    }
    return got;
  }

  void close() {
    if (qp) {
      EXPECT_EQ(verbs().destroyQp(qp), 0);
    }
    if (cq) {
      EXPECT_EQ(verbs().destroyCq(cq), 0);
    }
    if (mr) {
      EXPECT_EQ(verbs().deregMr(mr), 0);
    }
    if (pd) {
      EXPECT_EQ(verbs().deallocPd(pd), 0);
    }
    if (context) {
      EXPECT_EQ(verbs().closeDevice(context), 0);
    }
  }
};

// Both processes send 256 KiB and write 256 KiB with immediate to the other;
// either one's polls may execute either one's sends.
void exchangeBothWays(int side, Pipe& out, Pipe& in) {
  Endpoint end;
  if (!end.open()) return;
  Address peer;
  ASSERT_TRUE(out.put(end.address()) && in.get(&peer));
  ASSERT_TRUE(end.connect(peer));
  ASSERT_EQ(end.postRecv(1, 1, kMaxMessageBytes), 0);
  ASSERT_EQ(end.postRecv(2, 0, 0), 0);
  char ready = 'r';
  ASSERT_TRUE(out.put(ready) && in.get(&ready)) << "the peer is not ready";
  for (size_t i = 0; i < kMaxMessageBytes; ++i) end.region(0)[i] = pattern(side, i);
  ASSERT_EQ(end.post(IBV_WR_SEND, kMaxMessageBytes, peer, 10), 0);
  ASSERT_EQ(end.post(IBV_WR_RDMA_WRITE_WITH_IMM, kMaxMessageBytes, peer, 11, 100 + side), 0);
  std::vector<ibv_wc> got = end.await(4);
  ASSERT_EQ(got.size(), 4u);
  std::vector<ibv_wc> sends, recvs;
  for (const ibv_wc& wc : got) {
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "wr " << wc.wr_id;
    ((wc.opcode & IBV_WC_RECV) ? recvs : sends).push_back(wc);
  }
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(sends[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(sends[0].wr_id, 10u);
  EXPECT_EQ(sends[1].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(sends[1].wr_id, 11u);
  ASSERT_EQ(recvs.size(), 2u);
  EXPECT_EQ(recvs[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(recvs[0].wr_id, 1u);
  EXPECT_EQ(recvs[0].byte_len, kMaxMessageBytes);
  EXPECT_EQ(recvs[0].src_qp, peer.qpNum);
  EXPECT_EQ(recvs[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(recvs[1].wr_id, 2u);
  EXPECT_EQ(recvs[1].byte_len, kMaxMessageBytes);
  EXPECT_EQ(recvs[1].imm_data, htonl(100 + (1 - side)));
  size_t wrongSent = 0, wrongWritten = 0;
  for (size_t i = 0; i < kMaxMessageBytes; ++i) {
    wrongSent += end.region(1)[i] != pattern(1 - side, i);
    wrongWritten += end.region(2)[i] != pattern(1 - side, i);
  }
  EXPECT_EQ(wrongSent, 0u);
  EXPECT_EQ(wrongWritten, 0u);
  // Neither end leaves before the other is done with its QP.
  char done = 'd';
  EXPECT_TRUE(out.put(done) && in.get(&done));
  end.close();
}

TEST(FakeVerbsShared, ProcessesSendAndWriteToEachOtherBothWays) {
  const std::string name = freshFabricName();
  Pipe toOne, toZero;
  const pid_t zero = spawn(name, [&] { exchangeBothWays(0, toOne, toZero); });
  const pid_t one = spawn(name, [&] { exchangeBothWays(1, toZero, toOne); });
  toOne.closeBoth();
  toZero.closeBoth();
  EXPECT_EQ(awaitChild(zero), 0);
  EXPECT_EQ(awaitChild(one), 0);
  EXPECT_EQ(shm_unlink(name.c_str()), 0) << "the fabric was never created";
}

bool isZombie(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t end = line.rfind(')');
  return end != std::string::npos && end + 2 < line.size() && line[end + 2] == 'Z';
}

// The peer connects, takes one write, and exits without destroying anything;
// a send that waits for its recv then fails as toward a destroyed QP, whether
// the peer was reaped already or is still a zombie.
void outliveAPeer(const std::string& name, bool reap) {
  Pipe toPeer, fromPeer;
  const pid_t peerPid = spawn(name, [&] {
    Endpoint end;
    if (!end.open()) return;
    Address survivor;
    ASSERT_TRUE(fromPeer.put(end.address()) && toPeer.get(&survivor));
    ASSERT_TRUE(end.connect(survivor));
    char go = 'r';
    ASSERT_TRUE(fromPeer.put(go) && toPeer.get(&go));  // then leave as killed
  });
  Endpoint end;
  ASSERT_TRUE(end.open());
  Address peer;
  ASSERT_TRUE(toPeer.put(end.address()) && fromPeer.get(&peer));
  ASSERT_TRUE(end.connect(peer));
  char ready = 0;
  ASSERT_TRUE(fromPeer.get(&ready));
  ASSERT_EQ(end.post(IBV_WR_RDMA_WRITE, 4096, peer, 1), 0);
  std::vector<ibv_wc> got = end.await(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, IBV_WC_SUCCESS);
  ASSERT_EQ(end.post(IBV_WR_SEND, 64, peer, 2), 0);
  EXPECT_TRUE(end.await(1, std::chrono::milliseconds(50)).empty()) << "the peer posted no recv";
  ASSERT_TRUE(toPeer.put(ready));
  if (reap) {
    EXPECT_EQ(awaitChild(peerPid), 0);
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!isZombie(peerPid) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(isZombie(peerPid));
  }
  got = end.await(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].wr_id, 2u);
  EXPECT_EQ(got[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(end.qp->state, IBV_QPS_ERR);
  if (!reap) {
    EXPECT_EQ(awaitChild(peerPid), 0);
  }
  end.close();
}

TEST(FakeVerbsShared, SendToAnExitedProcessExceedsRetries) {
  const std::string name = freshFabricName();
  const pid_t survivor = spawn(name, [&] {
    outliveAPeer(name, /*reap=*/true);
    if (!::testing::Test::HasFailure()) outliveAPeer(name, /*reap=*/false);
  });
  EXPECT_EQ(awaitChild(survivor), 0);
  EXPECT_EQ(shm_unlink(name.c_str()), 0);
}

// Processes killed while polling (most likely inside the fabric lock) leave
// the fabric usable: the lock is robust.
TEST(FakeVerbsShared, AProcessKilledMidCallWedgesNoOne) {
  const std::string name = freshFabricName();
  const pid_t survivor = spawn(name, [&] {
    for (int round = 0; round < 5; ++round) {
      Pipe started;
      const pid_t spinner = spawn(name, [&] {
        Endpoint end;
        if (!end.open()) return;
        const char up = 'u';
        EXPECT_TRUE(started.put(up));
        for (;;) {
          ibv_wc wc;
          ibv_poll_cq(end.cq, 1, &wc);
        }
      });
      char up = 0;
      ASSERT_TRUE(started.get(&up));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      kill(spinner, SIGKILL);
      EXPECT_EQ(awaitChild(spinner), 128 + SIGKILL);
    }
    // Two ends in this process, as in-process, over the shared fabric.
    Endpoint a, b;
    ASSERT_TRUE(a.open() && b.open());
    ASSERT_TRUE(a.connect(b.address()) && b.connect(a.address()));
    ASSERT_EQ(b.postRecv(1, 1, 100), 0);
    ASSERT_EQ(a.post(IBV_WR_SEND, 100, b.address(), 2), 0);
    EXPECT_EQ(b.await(1).size(), 1u);
    EXPECT_EQ(a.await(1).size(), 1u);
    a.close();
    b.close();
  });
  EXPECT_EQ(awaitChild(survivor), 0);
  EXPECT_EQ(shm_unlink(name.c_str()), 0);
}

// A name already taken by an object of another size is refused, not mapped.
TEST(FakeVerbsShared, AnObjectOfAnotherLayoutIsRefused) {
  const std::string name = freshFabricName();
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  close(fd);
  const pid_t child = spawn(name, [] {
    int count = -1;
    EXPECT_EQ(verbs().getDeviceList(&count), nullptr);
  });
  EXPECT_EQ(awaitChild(child), 0);
  EXPECT_EQ(shm_unlink(name.c_str()), 0);
}

}  // namespace

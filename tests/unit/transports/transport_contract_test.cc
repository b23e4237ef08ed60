// What transport.h promises, checked on every transport that reaches peers
// across hosts (tcp with one and with four sockets a connection, ucx, an NCCL
// net plugin through netplugin, and ibverbs): both ends
// in this process, driven from one thread as the executor drives them. What
// only one transport does is tested in its own file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tcp_test_util.h"

namespace braid::transport {
namespace {

using testing::connectPair;
using testing::driveAll;
using testing::pattern;
using testing::Pending;

struct Flavour {
  const char* name;       // for the test name
  const char* transport;  // as registered
  int nSocks;
};

Options optionsFor(const Flavour& f, uint8_t secretSeed = 1) {
  return testing::tcpOptions(f.nSocks, secretSeed);
}

// netplugin runs over braid's own NCCL plugin (which runs over tcp on lo);
// ibverbs over the tests' in-process RDMA fabric (fake_verbs/), as this
// machine has no RDMA device.
void prepareFor(const Flavour& f) {
  const std::string name = f.transport;
#ifdef BRAID_NCCL_NET_PLUGIN_PATH
  if (name == "netplugin") {
    setenv("BRAID_NET_PLUGIN", BRAID_NCCL_NET_PLUGIN_PATH, 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
  }
#endif
#ifdef BRAID_FAKE_VERBS_PATH
  if (name == "ibverbs") setenv("BRAID_IB_LIBRARY", BRAID_FAKE_VERBS_PATH, 1);
#endif
  (void)name;
}

// Creates the flavour's transport, or skips saying why it cannot run here
// (ucx without UCX: NotSupported; netplugin without the plugin built; ibverbs
// without an RDMA device or the fake fabric).
#define CREATE_OR_SKIP(flavour, options, out)                                                    \
  do {                                                                                           \
    prepareFor(flavour);                                                                         \
    Status _st = createTransport((flavour).transport, (options), (out));                         \
    if (!_st.isOk() && std::string((flavour).transport) != "tcp") GTEST_SKIP() << _st.message(); \
    ASSERT_TRUE(_st.isOk()) << _st.message();                                                    \
  } while (0)

class Contract : public ::testing::TestWithParam<Flavour>, protected testing::ConnectedPair {
 protected:
  void SetUp() override { connect(); }

  void connect() {
    send_.reset(), recv_.reset();
    CREATE_OR_SKIP(GetParam(), optionsFor(GetParam()), &sender_);
    CREATE_OR_SKIP(GetParam(), optionsFor(GetParam()), &receiver_);
    uint64_t id = 0;
    Status st = connectPair(*sender_, *receiver_, 42, &send_, &recv_, &id);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(id, 42u);
  }
};

TEST_P(Contract, MessagesOfManySizes) {
  // Empty, eager and large (striped over tcp's sockets, rendezvous in ucx)
  // messages, each into a larger buffer.
  for (size_t size : {size_t{0}, size_t{1}, size_t{4099}, size_t{1} << 20, (size_t{16} << 20) + 7}) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::vector<uint8_t> out = pattern(size, static_cast<uint32_t>(size)), in(size + 13, 0xee);
    std::vector<Pending> reqs = {postRecv(in.data(), in.size(), 5), postSend(out.data(), out.size(), 5)};
    drive(reqs);
    ASSERT_TRUE(reqs[0].status.isOk()) << reqs[0].status.message();
    ASSERT_TRUE(reqs[1].status.isOk()) << reqs[1].status.message();
    EXPECT_EQ(reqs[0].size, size);
    EXPECT_EQ(reqs[1].size, size);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
    EXPECT_EQ(in[size], 0xee) << "wrote past the message";
  }
}

TEST_P(Contract, ManyMessagesMatchInOrder) {
  // Small and large messages mixed, every send posted before any receive and
  // before any progress: matching follows the sender's order, not a race.
  constexpr int kCount = 64;
  std::vector<std::vector<uint8_t>> out(kCount), in(kCount);
  std::vector<Pending> reqs;
  for (int i = 0; i < kCount; ++i) {
    size_t size = i % 7 == 3 ? (600 << 10) + i : static_cast<size_t>(i * 37 % 300);
    out[i] = pattern(size, i);
    in[i].assign(size + 1, 0);
  }
  for (int i = 0; i < kCount; ++i) reqs.push_back(postSend(out[i].data(), out[i].size(), 100 + i));
  for (int i = 0; i < kCount; ++i) reqs.push_back(postRecv(in[i].data(), in[i].size(), 100 + i));
  drive(reqs);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(reqs[i].status.isOk()) << reqs[i].status.message();
    ASSERT_TRUE(reqs[kCount + i].status.isOk()) << reqs[kCount + i].status.message();
    ASSERT_EQ(reqs[kCount + i].size, out[i].size()) << "message " << i;
    EXPECT_TRUE(std::equal(out[i].begin(), out[i].end(), in[i].begin())) << "message " << i;
  }
}

TEST_P(Contract, RequestsCompleteInPostingOrder) {
  std::vector<uint8_t> big = pattern(4 << 20, 1), small = pattern(8, 2), inBig(big.size()), inSmall(8);
  std::vector<Pending> reqs = {postSend(big.data(), big.size(), 1), postSend(small.data(), small.size(), 2),
                               postRecv(inBig.data(), inBig.size(), 1),
                               postRecv(inSmall.data(), inSmall.size(), 2)};
  Deadline deadline(10000);
  bool sawSecondFirst = false;
  while (!(reqs[0].done && reqs[1].done && reqs[2].done && reqs[3].done) && !deadline.expired()) {
    for (int i : {1, 0, 3, 2}) {  // test the later request first
      if (reqs[i].done) continue;
      ASSERT_TRUE(reqs[i].transport->test(reqs[i].req, &reqs[i].done, &reqs[i].size).isOk());
      if (reqs[i].done && (i == 1 || i == 3) && !reqs[i - 1].done) {
        // The earlier request must have completed too, at the latest together.
        Pending& e = reqs[i - 1];
        ASSERT_TRUE(e.transport->test(e.req, &e.done, &e.size).isOk());
        if (!e.done) sawSecondFirst = true;
      }
    }
    ASSERT_TRUE(sender_->wait(1).isOk());
    ASSERT_TRUE(receiver_->wait(1).isOk());
  }
  EXPECT_FALSE(sawSecondFirst) << "a request completed before an earlier one on the same comm";
  EXPECT_EQ(inBig, big);
  EXPECT_EQ(inSmall, small);
}

TEST_P(Contract, TagMismatchIsRemoteError) {
  uint32_t word = 1, back = 0;
  std::vector<Pending> reqs = {postSend(&word, 4, 7), postRecv(&back, 4, 8)};
  drive(reqs);
  EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[1].status.message().find("expected tag 8, got tag 7"), std::string::npos)
      << reqs[1].status.message();
  // The comm is dead afterwards: what follows on it can no longer be trusted.
  Request* req = nullptr;
  EXPECT_EQ(recv_->irecv(&back, 4, 7, nullptr, &req).code(), Code::kRemoteError);
  EXPECT_EQ(req, nullptr);
}

TEST_P(Contract, TooSmallCapacityIsRemoteError) {
  for (size_t size : {size_t{1000}, size_t{4} << 20}) {
    SCOPED_TRACE("size " + std::to_string(size));
    connect();  // a fresh pair: the error kills the connection
    std::vector<uint8_t> out(size), in(size - 1);
    std::vector<Pending> reqs = {postSend(out.data(), out.size(), 3), postRecv(in.data(), in.size(), 3)};
    drive(reqs);
    EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
    const std::string& m = reqs[1].status.message();
    EXPECT_NE(m.find("message too large"), std::string::npos) << m;
    EXPECT_NE(m.find("at most " + std::to_string(size - 1) + " bytes"), std::string::npos) << m;
  }
}

TEST_P(Contract, PeerCloseIsRemoteError) {
  send_.reset();
  uint32_t back = 0;
  std::vector<Pending> reqs = {postRecv(&back, 4, 1)};
  drive(reqs);
  EXPECT_EQ(reqs[0].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[0].status.message().find("connection closed by peer"), std::string::npos)
      << reqs[0].status.message();
}

TEST_P(Contract, WrongSecretNeverConnects) {
  std::unique_ptr<Transport> a, b;
  CREATE_OR_SKIP(GetParam(), optionsFor(GetParam(), 1), &a);
  CREATE_OR_SKIP(GetParam(), optionsFor(GetParam(), 2), &b);
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  if (!a->capabilities().mutualAuthentication) {
    // The connector is not told; the listener reads its proof, refuses it and
    // never accepts it, however long it is asked.
    Handle handle;
    std::unique_ptr<ListenComm> listener;
    ASSERT_TRUE(b->listen(0, &handle, &listener).isOk());
    Deadline deadline(1000);
    uint64_t id = 0;
    bool connecting = true;  // until connect() gave a comm or failed: either is fine
    while (!deadline.expired()) {
      if (connecting && !a->connect(0, handle, 1, &s).isOk()) connecting = false;
      if (s) connecting = false;
      ASSERT_TRUE(b->accept(*listener, &r, &id).isOk());
      ASSERT_EQ(r, nullptr) << "a connector without the secret was accepted";
    }
    return;
  }
  Status st = connectPair(*a, *b, 1, &s, &r);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("secret"), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(Transports, Contract,
                         ::testing::Values(Flavour{"tcp_1sock", "tcp", 1}, Flavour{"tcp_4socks", "tcp", 4},
                                           Flavour{"ucx", "ucx", 0}, Flavour{"netplugin", "netplugin", 0},
                                           Flavour{"ibverbs", "ibverbs", 0}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace braid::transport

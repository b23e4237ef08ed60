// The TCP transport end to end over loopback, both ends in this process: what
// only tcp does (transport_contract_test.cc checks what every transport must).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <vector>

#include "tcp_test_util.h"
#include "tests/common/socket_traffic_classes.h"

namespace braid::transport {
namespace {

using testing::connectPair;
using testing::driveAll;
using testing::pattern;
using testing::Pending;
using testing::tcpOptions;

TEST(TcpTransport, RegisteredAndDescribesDevices) {
  std::unique_ptr<Transport> t;
  ASSERT_TRUE(createTransport("tcp", tcpOptions(2), &t).isOk());
  EXPECT_STREQ(t->name(), "tcp");
  EXPECT_FALSE(t->capabilities().needsRegistration);
  ASSERT_GE(t->deviceCount(), 1);
  DeviceProperties props;
  ASSERT_TRUE(t->deviceProperties(0, &props).isOk());
  EXPECT_EQ(props.name, "lo");
  EXPECT_EQ(props.address, "127.0.0.1");
  EXPECT_EQ(t->deviceProperties(t->deviceCount(), &props).code(), Code::kInvalidArgument);
}

TEST(TcpTransport, RejectsBadOptions) {
  std::unique_ptr<Transport> t;
  EXPECT_EQ(createTransport("tcp", tcpOptions(-1), &t).code(), Code::kInvalidArgument);
  EXPECT_EQ(createTransport("tcp", tcpOptions(17), &t).code(), Code::kInvalidArgument);
  EXPECT_TRUE(createTransport("tcp", tcpOptions(0), &t).isOk());  // 0: chosen per peer
  Options o = tcpOptions(1);
  o.ifname = "=no-such-interface";
  EXPECT_EQ(createTransport("tcp", o, &t).code(), Code::kNotSupported);
  for (int tc : {-2, 256}) {
    o = tcpOptions(1);
    o.trafficClass = tc;
    EXPECT_EQ(createTransport("tcp", o, &t).code(), Code::kInvalidArgument) << tc;
  }
}

// Every socket of a connection carries the transports' traffic class, on
// both ends: the connector's from before its SYN, the acceptor's once
// accepted. Transports without one leave the system's (0).
TEST(TcpTransport, SocketsCarryTheOptionsTrafficClass) {
  constexpr int kExpedited = 0xb8;  // DSCP 46 (EF) << 2
  const std::map<int, int> before = test::connectedTcpTrafficClasses();
  Options o = tcpOptions(3);
  o.trafficClass = kExpedited;
  std::unique_ptr<Transport> a, b, plainA, plainB;
  ASSERT_TRUE(createTransport("tcp", o, &a).isOk());
  ASSERT_TRUE(createTransport("tcp", o, &b).isOk());
  ASSERT_TRUE(createTransport("tcp", tcpOptions(2), &plainA).isOk());
  ASSERT_TRUE(createTransport("tcp", tcpOptions(2), &plainB).isOk());
  std::unique_ptr<SendComm> s, plainS;
  std::unique_ptr<RecvComm> r, plainR;
  ASSERT_TRUE(connectPair(*a, *b, 1, &s, &r).isOk());
  ASSERT_TRUE(connectPair(*plainA, *plainB, 2, &plainS, &plainR).isOk());
  std::map<int, int> now = test::connectedTcpTrafficClasses();
  const int expeditedBefore = before.count(kExpedited) ? before.at(kExpedited) : 0;
  const int plainBefore = before.count(0) ? before.at(0) : 0;
  EXPECT_EQ(now[kExpedited] - expeditedBefore, 2 * 3) << "both ends of 3 sockets";
  EXPECT_EQ(now[0] - plainBefore, 2 * 2) << "both ends of the plain connection's 2";
}

TEST(TcpTransport, RejectsForeignHandle) {
  std::unique_ptr<Transport> t;
  ASSERT_TRUE(createTransport("tcp", tcpOptions(1), &t).isOk());
  Handle junk;
  junk.bytes.fill(0x77);
  std::unique_ptr<SendComm> comm;
  EXPECT_EQ(t->connect(0, junk, 1, &comm).code(), Code::kInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

class TcpPair : public ::testing::TestWithParam<int>, protected testing::ConnectedPair {
 protected:
  void SetUp() override {
    ASSERT_TRUE(createTransport("tcp", tcpOptions(GetParam()), &sender_).isOk());
    ASSERT_TRUE(createTransport("tcp", tcpOptions(GetParam()), &receiver_).isOk());
    uint64_t id = 0;
    Status st = connectPair(*sender_, *receiver_, 42, &send_, &recv_, &id);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(id, 42u);
  }
};

TEST_P(TcpPair, SendToClosedReceiverIsRemoteError) {
  recv_.reset();
  std::vector<uint8_t> out(1 << 20);
  Status last;
  Deadline deadline(5000);
  // The first sends may still fit the kernel's buffers; the reset comes soon.
  while (last.isOk() && !deadline.expired()) {
    std::vector<Pending> reqs = {postSend(out.data(), out.size(), 1)};
    if (!reqs[0].req) break;
    driveAll(reqs, *sender_, *receiver_, 5000);
    last = reqs[0].status;
  }
  if (last.isOk()) {
    Request* req = nullptr;
    last = send_->isend(out.data(), out.size(), 1, nullptr, &req);
  }
  EXPECT_EQ(last.code(), Code::kRemoteError) << last.message();
  EXPECT_NE(last.message().find("connection closed by peer"), std::string::npos) << last.message();
}

INSTANTIATE_TEST_SUITE_P(Socks, TcpPair, ::testing::Values(1, 4),
                         [](const auto& info) { return std::to_string(info.param) + "socks"; });

TEST(TcpTransport, IPv6Loopback) {
  setenv("BRAID_SOCKET_FAMILY", "AF_INET6", 1);
  std::unique_ptr<Transport> a, b;
  Status st = createTransport("tcp", tcpOptions(2), &a);
  if (st.isOk()) st = createTransport("tcp", tcpOptions(2), &b);
  unsetenv("BRAID_SOCKET_FAMILY");
  if (!st.isOk()) GTEST_SKIP() << "no IPv6 loopback: " << st.message();
  DeviceProperties props;
  ASSERT_TRUE(a->deviceProperties(0, &props).isOk());
  EXPECT_EQ(props.address, "::1");
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  st = connectPair(*a, *b, 9, &s, &r);
  if (st.code() == Code::kSystemError) GTEST_SKIP() << "IPv6 loopback unusable: " << st.message();
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<uint8_t> out = pattern(300 << 10, 3), in(out.size());
  std::vector<Pending> reqs = {Pending(a.get()), Pending(b.get())};
  ASSERT_TRUE(s->isend(out.data(), out.size(), 1, nullptr, &reqs[0].req).isOk());
  ASSERT_TRUE(r->irecv(in.data(), in.size(), 1, nullptr, &reqs[1].req).isOk());
  driveAll(reqs, *a, *b);
  ASSERT_TRUE(reqs[1].status.isOk()) << reqs[1].status.message();
  EXPECT_EQ(in, out);
}

}  // namespace
}  // namespace braid::transport

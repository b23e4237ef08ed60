// The TCP transport end to end over loopback, both ends in this process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "tcp_test_util.h"

namespace braid::transport {
namespace {

using testing::connectPair;
using testing::driveAll;
using testing::Pending;
using testing::tcpOptions;

std::vector<uint8_t> pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> v(size);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

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

class TcpPair : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(createTransport("tcp", tcpOptions(GetParam()), &sender_).isOk());
    ASSERT_TRUE(createTransport("tcp", tcpOptions(GetParam()), &receiver_).isOk());
    uint64_t id = 0;
    Status st = connectPair(*sender_, *receiver_, 42, &send_, &recv_, &id);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(id, 42u);
  }

  Pending postSend(const void* data, size_t size, uint32_t tag) {
    Pending p(sender_.get());
    EXPECT_TRUE(send_->isend(data, size, tag, nullptr, &p.req).isOk());
    return p;
  }
  Pending postRecv(void* data, size_t capacity, uint32_t tag) {
    Pending p(receiver_.get());
    EXPECT_TRUE(recv_->irecv(data, capacity, tag, nullptr, &p.req).isOk());
    return p;
  }
  void drive(std::vector<Pending>& reqs) { driveAll(reqs, *sender_, *receiver_); }

  std::unique_ptr<Transport> sender_, receiver_;
  std::unique_ptr<SendComm> send_;
  std::unique_ptr<RecvComm> recv_;
};

TEST_P(TcpPair, MessagesOfManySizes) {
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

TEST_P(TcpPair, ManyMessagesMatchInOrder) {
  // Small and striped messages mixed, all posted before any progress, so that
  // lead sockets rotate and parts of different messages share sockets.
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

TEST_P(TcpPair, RequestsCompleteInPostingOrder) {
  std::vector<uint8_t> big = pattern(4 << 20, 1), small = pattern(8, 2), inBig(big.size()), inSmall(8);
  Pending s1 = postSend(big.data(), big.size(), 1), s2 = postSend(small.data(), small.size(), 2);
  Pending r1 = postRecv(inBig.data(), inBig.size(), 1), r2 = postRecv(inSmall.data(), inSmall.size(), 2);
  std::vector<Pending> reqs = {s1, s2, r1, r2};
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

TEST_P(TcpPair, TagMismatchIsRemoteError) {
  uint32_t word = 1, back = 0;
  std::vector<Pending> reqs = {postSend(&word, 4, 7), postRecv(&back, 4, 8)};
  drive(reqs);
  EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[1].status.message().find("expected tag 8, got tag 7"), std::string::npos) << reqs[1].status.message();
  // The comm is dead afterwards: the streams can no longer be trusted.
  Request* req = nullptr;
  EXPECT_EQ(recv_->irecv(&back, 4, 7, nullptr, &req).code(), Code::kRemoteError);
  EXPECT_EQ(req, nullptr);
}

TEST_P(TcpPair, TooSmallCapacityIsRemoteError) {
  std::vector<uint8_t> out(1000), in(999);
  std::vector<Pending> reqs = {postSend(out.data(), out.size(), 3), postRecv(in.data(), in.size(), 3)};
  drive(reqs);
  EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
  const std::string& m = reqs[1].status.message();
  EXPECT_NE(m.find("at most 999 bytes, got 1000 bytes"), std::string::npos) << m;
}

TEST_P(TcpPair, PeerCloseIsRemoteError) {
  send_.reset();
  uint32_t back = 0;
  std::vector<Pending> reqs = {postRecv(&back, 4, 1)};
  drive(reqs);
  EXPECT_EQ(reqs[0].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[0].status.message().find("connection closed by peer 127.0.0.1:"), std::string::npos)
      << reqs[0].status.message();
}

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

TEST(TcpTransport, WrongSecretNeverConnects) {
  std::unique_ptr<Transport> a, b;
  ASSERT_TRUE(createTransport("tcp", tcpOptions(2, 1), &a).isOk());
  ASSERT_TRUE(createTransport("tcp", tcpOptions(2, 2), &b).isOk());
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  Status st = connectPair(*a, *b, 1, &s, &r);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("secret"), std::string::npos) << st.message();
  EXPECT_EQ(r, nullptr);
}

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

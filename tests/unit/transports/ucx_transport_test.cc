// The UCX transport end to end over loopback, both ends in this process (one
// thread, as the executor drives a transport). Skips, saying why, where UCX
// cannot be loaded.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tcp_test_util.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"

namespace braid::transport {
namespace {

using testing::connectPair;
using testing::driveAll;
using testing::Pending;

Options ucxOptions(uint8_t secretSeed = 1) { return testing::tcpOptions(0, secretSeed); }

std::vector<uint8_t> pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> v(size);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

// Creates a UCX transport, or says why the test cannot run.
#define CREATE_UCX_OR_SKIP(options, out)                                  \
  do {                                                                    \
    Status _st = createTransport("ucx", (options), (out));                \
    if (_st.code() == Code::kNotSupported) GTEST_SKIP() << _st.message(); \
    ASSERT_TRUE(_st.isOk()) << _st.message();                             \
  } while (0)

TEST(UcxTransport, RegisteredAndDescribesDevices) {
  std::unique_ptr<Transport> t;
  CREATE_UCX_OR_SKIP(ucxOptions(), &t);
  EXPECT_STREQ(t->name(), "ucx");
  EXPECT_FALSE(t->capabilities().needsRegistration);
  ASSERT_GE(t->deviceCount(), 1);
  DeviceProperties props;
  ASSERT_TRUE(t->deviceProperties(0, &props).isOk());
  EXPECT_EQ(props.name, "lo");
  EXPECT_EQ(props.address, "127.0.0.1");
  EXPECT_EQ(t->deviceProperties(t->deviceCount(), &props).code(), Code::kInvalidArgument);
}

TEST(UcxTransport, RejectsForeignHandle) {
  std::unique_ptr<Transport> t;
  CREATE_UCX_OR_SKIP(ucxOptions(), &t);
  Handle junk;
  junk.bytes.fill(0x77);
  std::unique_ptr<SendComm> comm;
  EXPECT_EQ(t->connect(0, junk, 1, &comm).code(), Code::kInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  // A tcp handle is not a ucx one either.
  std::unique_ptr<Transport> tcp;
  ASSERT_TRUE(createTransport("tcp", testing::tcpOptions(1), &tcp).isOk());
  Handle tcpHandle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(tcp->listen(0, &tcpHandle, &listener).isOk());
  EXPECT_EQ(t->connect(0, tcpHandle, 1, &comm).code(), Code::kInvalidArgument);
}

class UcxPair : public ::testing::Test {
 protected:
  void SetUp() override {
    CREATE_UCX_OR_SKIP(ucxOptions(), &sender_);
    CREATE_UCX_OR_SKIP(ucxOptions(), &receiver_);
    uint64_t id = 0;
    Status st = connectPair(*sender_, *receiver_, 42, &send_, &recv_, &id);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(id, 42u);
  }

  Pending postSend(const void* data, size_t size, uint32_t tag) {
    Pending p(sender_.get());
    Status st = send_->isend(data, size, tag, nullptr, &p.req);
    EXPECT_TRUE(st.isOk()) << st.message();
    return p;
  }
  Pending postRecv(void* data, size_t capacity, uint32_t tag) {
    Pending p(receiver_.get());
    Status st = recv_->irecv(data, capacity, tag, nullptr, &p.req);
    EXPECT_TRUE(st.isOk()) << st.message();
    return p;
  }
  void drive(std::vector<Pending>& reqs) { driveAll(reqs, *sender_, *receiver_); }

  std::unique_ptr<Transport> sender_, receiver_;
  std::unique_ptr<SendComm> send_;
  std::unique_ptr<RecvComm> recv_;
};

TEST_F(UcxPair, MessagesOfManySizes) {
  // Eager and rendezvous sizes alike, received into larger buffers.
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

TEST_F(UcxPair, ManyMessagesMatchInOrder) {
  // Sends posted before their receives (UCX's unexpected queue) and large ones
  // mixed in, so that matching order is UCX's, not the posting race's.
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

TEST_F(UcxPair, RequestsCompleteInPostingOrder) {
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

TEST_F(UcxPair, TagMismatchIsRemoteError) {
  uint32_t word = 1, back = 0;
  std::vector<Pending> reqs = {postSend(&word, 4, 7), postRecv(&back, 4, 8)};
  drive(reqs);
  EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[1].status.message().find("expected tag 8, got tag 7"), std::string::npos)
      << reqs[1].status.message();
  Request* req = nullptr;
  EXPECT_EQ(recv_->irecv(&back, 4, 7, nullptr, &req).code(), Code::kRemoteError);
  EXPECT_EQ(req, nullptr);
}

TEST_F(UcxPair, TooSmallCapacityIsRemoteError) {
  for (size_t size : {size_t{1000}, size_t{4} << 20}) {  // eager, then rendezvous
    SCOPED_TRACE("size " + std::to_string(size));
    send_.reset(), recv_.reset();
    SetUp();  // a fresh pair: the error kills the connection
    std::vector<uint8_t> out(size), in(size - 1);
    std::vector<Pending> reqs = {postSend(out.data(), out.size(), 3), postRecv(in.data(), in.size(), 3)};
    drive(reqs);
    EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
    const std::string& m = reqs[1].status.message();
    EXPECT_NE(m.find("message too large"), std::string::npos) << m;
    EXPECT_NE(m.find("at most " + std::to_string(size - 1) + " bytes"), std::string::npos) << m;
  }
}

TEST_F(UcxPair, PeerCloseIsRemoteError) {
  send_.reset();
  uint32_t back = 0;
  std::vector<Pending> reqs = {postRecv(&back, 4, 1)};
  drive(reqs);
  EXPECT_EQ(reqs[0].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[0].status.message().find("connection closed by peer"), std::string::npos)
      << reqs[0].status.message();
}

// A send counts as done once its buffer is free (eager sizes: before the
// peer has it); the close flushes, so a receive posted only afterwards still
// gets it.
TEST_F(UcxPair, WhatWasSentBeforeACloseStillArrives) {
  std::vector<std::vector<uint8_t>> out = {pattern(1000, 9), pattern(6000, 10)};
  std::vector<Pending> sends = {postSend(out[0].data(), out[0].size(), 4),
                                postSend(out[1].data(), out[1].size(), 5)};
  driveAll(sends, *sender_, *receiver_);
  ASSERT_TRUE(sends[0].status.isOk()) << sends[0].status.message();
  ASSERT_TRUE(sends[1].status.isOk()) << sends[1].status.message();
  send_.reset();
  std::vector<std::vector<uint8_t>> in = {std::vector<uint8_t>(1000), std::vector<uint8_t>(6000)};
  std::vector<Pending> recvs = {postRecv(in[0].data(), in[0].size(), 4),
                                postRecv(in[1].data(), in[1].size(), 5)};
  drive(recvs);
  ASSERT_TRUE(recvs[0].status.isOk()) << recvs[0].status.message();
  ASSERT_TRUE(recvs[1].status.isOk()) << recvs[1].status.message();
  EXPECT_EQ(in, out);
}

TEST_F(UcxPair, ClosingWithReceivesPendingEndsThem) {
  std::vector<uint8_t> in(1 << 20);
  Pending r = postRecv(in.data(), in.size(), 1);
  ASSERT_NE(r.req, nullptr);
  recv_.reset();  // must cancel, not leave UCX writing into `in` later
  std::vector<uint8_t> out(in.size(), 1);
  Request* req = nullptr;
  Status st = send_->isend(out.data(), out.size(), 1, nullptr, &req);
  if (st.isOk()) {
    std::vector<Pending> sends = {Pending(sender_.get())};
    sends[0].req = req;
    driveAll(sends, *sender_, *receiver_, 5000);
  }
  EXPECT_TRUE(std::all_of(in.begin(), in.end(), [](uint8_t b) { return b == 0; }));
}

TEST(UcxTransport, WrongSecretNeverConnects) {
  std::unique_ptr<Transport> a, b;
  CREATE_UCX_OR_SKIP(ucxOptions(1), &a);
  CREATE_UCX_OR_SKIP(ucxOptions(2), &b);
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  Status st = connectPair(*a, *b, 1, &s, &r);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("secret"), std::string::npos) << st.message();
  EXPECT_EQ(r, nullptr);
}

// A stranger's connection that never speaks is dropped at the handshake
// deadline, and a genuine peer connecting meanwhile is not held up by it.
TEST(UcxTransport, SilentStrangerDoesNotBlockGenuinePeer) {
  Options quick = ucxOptions();
  quick.handshakeTimeoutMs = 300;
  std::unique_ptr<Transport> receiver, sender, stranger;
  CREATE_UCX_OR_SKIP(quick, &receiver);
  CREATE_UCX_OR_SKIP(quick, &sender);
  CREATE_UCX_OR_SKIP(ucxOptions(7), &stranger);
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  // The stranger starts a connection (endpoint and hello) and then stops
  // progressing: from the receiver's side it is silent.
  std::unique_ptr<SendComm> strangerComm;
  ASSERT_TRUE(stranger->connect(0, handle, 3, &strangerComm).isOk());
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  uint64_t id = 0;
  Deadline deadline(5000);
  while (!(s && r) && !deadline.expired()) {
    if (!s) {
      ASSERT_TRUE(sender->connect(0, handle, 5, &s).isOk());
    }
    if (!r) {
      ASSERT_TRUE(receiver->accept(*listener, &r, &id).isOk());
    }
    ASSERT_TRUE(sender->wait(1).isOk());
    ASSERT_TRUE(receiver->wait(1).isOk());
  }
  ASSERT_TRUE(s && r) << "the genuine peer did not get through";
  EXPECT_EQ(id, 5u);
  // The stranger never becomes a connection, however long it is given.
  std::unique_ptr<RecvComm> extra;
  Deadline later(800);
  while (!later.expired()) {
    ASSERT_TRUE(receiver->accept(*listener, &extra, &id).isOk());
    ASSERT_EQ(extra, nullptr);
    ASSERT_TRUE(receiver->wait(1).isOk());
  }
  EXPECT_EQ(strangerComm, nullptr);
  // Woken up, the stranger finds its connection gone or refused.
  Status st;
  Deadline end(3000);
  while (st.isOk() && !strangerComm && !end.expired()) {
    st = stranger->connect(0, handle, 3, &strangerComm);
    (void)receiver->accept(*listener, &extra, &id);
    ASSERT_EQ(extra, nullptr);
    ASSERT_TRUE(stranger->wait(1).isOk());
  }
  EXPECT_EQ(strangerComm, nullptr);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
}

}  // namespace
}  // namespace braid::transport

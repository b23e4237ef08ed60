// The UCX transport end to end over loopback, both ends in this process (one
// thread, as the executor drives a transport): what only ucx does; what every
// transport must is in transport_contract_test.cc. Skips, saying why, where
// UCX cannot be loaded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "tcp_test_util.h"
#include "transports/net/address_handle.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"
#include "transports/ucx/ucx_wire.h"

namespace braid::transport {
namespace {

using testing::connectPair;
using testing::connectVia;
using testing::driveAll;
using testing::pattern;
using testing::Pending;

Options ucxOptions(uint8_t secretSeed = 1) { return testing::tcpOptions(0, secretSeed); }

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

class UcxPair : public ::testing::Test, protected testing::ConnectedPair {
 protected:
  void SetUp() override {
    CREATE_UCX_OR_SKIP(ucxOptions(), &sender_);
    CREATE_UCX_OR_SKIP(ucxOptions(), &receiver_);
    uint64_t id = 0;
    Status st = connectPair(*sender_, *receiver_, 42, &send_, &recv_, &id);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(id, 42u);
  }
};

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
  Status st = connectVia(*sender, *receiver, *listener, handle, 5, &s, &r, &id);
  ASSERT_TRUE(st.isOk()) << "the genuine peer did not get through: " << st.message();
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
  st = Status::ok();
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

// Raw bytes on the listener's TCP port (UCX's connection manager is behind
// it): no crash, and a genuine peer still gets through.
TEST(UcxTransport, GarbageOnTheListenerPortDoesNotBlockGenuinePeer) {
  std::unique_ptr<Transport> receiver, sender;
  CREATE_UCX_OR_SKIP(ucxOptions(), &receiver);
  CREATE_UCX_OR_SKIP(ucxOptions(), &sender);
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  net::SocketAddress address;
  ASSERT_TRUE(net::unpackAddressHandle(ucx::kMagic, ucx::kHandleVersion, handle, &address));
  std::vector<net::Fd> kept;  // half of them stay open, silent after their junk
  for (int k = 0; k < 20; ++k) {
    net::Fd fd;
    if (!net::connectTo(address, Deadline(2000), &fd).isOk()) continue;
    std::vector<uint8_t> junk = pattern(static_cast<size_t>(k) * 200 + 1, k);
    (void)!write(fd.get(), junk.data(), junk.size());
    if (k % 2 == 0) kept.push_back(std::move(fd));
  }
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  uint64_t id = 0;
  Status st = connectVia(*sender, *receiver, *listener, handle, 7, &s, &r, &id);
  ASSERT_TRUE(st.isOk()) << "the genuine peer did not get through: " << st.message();
  EXPECT_EQ(id, 7u);
}

}  // namespace
}  // namespace braid::transport

// What the ibverbs transport adds to transport.h's contract (which
// transport_contract_test.cc checks on it): its devices, and strangers on its
// side channel. Run over fake_verbs/, the in-process RDMA fabric, since this
// machine has none; the real libibverbs is what BRAID_IB_LIBRARY replaces.
#include <gtest/gtest.h>
#include <poll.h>

#include <cstdlib>
#include <cstring>

#include "tcp_test_util.h"
#include "transports/ibverbs/ib_wire.h"
#include "transports/net/address_handle.h"
#include "transports/net/socket.h"

namespace braid::transport {
namespace {

using testing::connectVia;
using testing::tcpOptions;

class IbVerbs : public ::testing::Test {
 protected:
  void SetUp() override { setenv("BRAID_IB_LIBRARY", BRAID_FAKE_VERBS_PATH, 1); }
  void TearDown() override {
    unsetenv("BRAID_FAKE_VERBS_DEVICES");
    unsetenv("BRAID_IB_HCA");
  }
  Status create(std::unique_ptr<Transport>* out, int handshakeMs = 2000) {
    return createTransport("ibverbs", tcpOptions(0, 1, handshakeMs), out);
  }
  // Two transports and a connection from the one to the other.
  struct Pair {
    std::unique_ptr<Transport> sender, receiver;
    std::unique_ptr<SendComm> send;
    std::unique_ptr<RecvComm> recv;
  };
  void connect(Pair* p) {
    ASSERT_TRUE(create(&p->receiver).isOk());
    ASSERT_TRUE(create(&p->sender).isOk());
    ASSERT_TRUE(testing::connectPair(*p->sender, *p->receiver, 3, &p->send, &p->recv).isOk());
  }
};

TEST_F(IbVerbs, DevicesAreTheActivePorts) {
  std::unique_ptr<Transport> t;
  ASSERT_TRUE(create(&t).isOk());
  ASSERT_EQ(t->deviceCount(), 1);
  DeviceProperties props;
  ASSERT_TRUE(t->deviceProperties(0, &props).isOk());
  EXPECT_EQ(props.name, "braidfake0:1");
  EXPECT_EQ(props.address, "lid 1");
  EXPECT_DOUBLE_EQ(props.speedMbps, 4 * 25781.25);  // 4x EDR
  EXPECT_EQ(t->deviceProperties(1, &props).code(), Code::kInvalidArgument);
}

TEST_F(IbVerbs, NoDeviceIsNotSupportedAndSaysWhy) {
  setenv("BRAID_FAKE_VERBS_DEVICES", "0", 1);
  std::unique_ptr<Transport> t;
  Status st = create(&t);
  EXPECT_EQ(st.code(), Code::kNotSupported);
  EXPECT_NE(st.message().find("no active RDMA port"), std::string::npos) << st.message();
  EXPECT_EQ(t, nullptr);
}

TEST_F(IbVerbs, HcaSelectionKeepsOnlyTheNamedPorts) {
  std::unique_ptr<Transport> t;
  setenv("BRAID_IB_HCA", "mlx5_0,braidfake0:2", 1);
  EXPECT_EQ(create(&t).code(), Code::kNotSupported);
  setenv("BRAID_IB_HCA", "mlx5_0,braidfake0:1", 1);
  ASSERT_TRUE(create(&t).isOk());
  EXPECT_EQ(t->deviceCount(), 1);
}

TEST_F(IbVerbs, AHandleOfAnotherTransportIsRefused) {
  std::unique_ptr<Transport> ib, tcp;
  ASSERT_TRUE(create(&ib).isOk());
  ASSERT_TRUE(createTransport("tcp", tcpOptions(1), &tcp).isOk());
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(tcp->listen(0, &handle, &listener).isOk());
  std::unique_ptr<SendComm> send;
  Status st = ib->connect(0, handle, 1, &send);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("not made by an ibverbs listen"), std::string::npos) << st.message();
}

// Garbage and silence on the side channel: each stranger is dropped while a
// genuine peer connects and moves a message.
TEST_F(IbVerbs, StrangersOnTheSideChannelAreDropped) {
  constexpr int kHandshakeMs = 1500;
  std::unique_ptr<Transport> receiver, sender;
  ASSERT_TRUE(create(&receiver, kHandshakeMs).isOk());
  ASSERT_TRUE(create(&sender, kHandshakeMs).isOk());
  Handle handle;
  std::unique_ptr<ListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).isOk());
  net::SocketAddress address;
  ASSERT_TRUE(net::unpackAddressHandle(ibverbs::kHandleMagic, ibverbs::kHandleVersion, handle, &address));

  net::Fd garbage, silent;
  ASSERT_TRUE(net::connectTo(address, Deadline(2000), &garbage).isOk());
  ASSERT_TRUE(net::connectTo(address, Deadline(2000), &silent).isOk());
  const char junk[] = "GET / HTTP/1.1\r\nHost: braid\r\n\r\n";
  size_t sent = 0;
  ASSERT_TRUE(net::sendSome(garbage.get(), junk, sizeof(junk), &sent).isOk());

  std::unique_ptr<SendComm> send;
  std::unique_ptr<RecvComm> recv;
  uint64_t id = 0;
  ASSERT_TRUE(connectVia(*sender, *receiver, *listener, handle, 9, &send, &recv, &id).isOk());
  EXPECT_EQ(id, 9u);

  // Both strangers end up closed by the listener, the silent one at the deadline.
  Deadline deadline(kHandshakeMs + 3000);
  bool garbageClosed = false, silentClosed = false;
  while (!(garbageClosed && silentClosed) && !deadline.expired()) {
    std::unique_ptr<RecvComm> none;
    ASSERT_TRUE(receiver->accept(*listener, &none, nullptr).isOk());
    ASSERT_EQ(none, nullptr) << "a stranger was accepted";
    for (auto [fd, closed] :
         {std::pair{garbage.get(), &garbageClosed}, std::pair{silent.get(), &silentClosed}}) {
      pollfd p{fd, POLLIN, 0};
      char byte;
      if (!*closed && poll(&p, 1, 1) == 1 && ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0) *closed = true;
    }
  }
  EXPECT_TRUE(garbageClosed);
  EXPECT_TRUE(silentClosed);

  uint64_t word = 0x0123456789abcdef, back = 0;
  testing::Pending s(sender.get()), r(receiver.get());
  ASSERT_TRUE(send->isend(&word, sizeof(word), 1, nullptr, &s.req).isOk());
  ASSERT_TRUE(recv->irecv(&back, sizeof(back), 1, nullptr, &r.req).isOk());
  std::vector<testing::Pending> reqs = {s, r};
  testing::driveAll(reqs, *sender, *receiver);
  ASSERT_TRUE(reqs[1].status.isOk()) << reqs[1].status.message();
  EXPECT_EQ(back, word);
}

// More messages in flight than the connection's clear-to-send credits, small
// (bounce slots) and large (written in pieces of the port's 256 KiB limit)
// mixed, receives posted first: each waits its turn and lands in order.
TEST_F(IbVerbs, MoreMessagesThanCreditsLandInOrder) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  constexpr int kCount = 3 * ibverbs::kDepth + 5;
  std::vector<std::vector<uint8_t>> out(kCount), in(kCount);
  std::vector<testing::Pending> reqs;
  for (int i = 0; i < kCount; ++i) {
    const size_t size = i % 9 == 4 ? (300 << 10) + i : static_cast<size_t>(i * 131 % 9000);
    out[i] = testing::pattern(size, i);
    in[i].assign(size, 0);
    testing::Pending r(p.receiver.get());
    ASSERT_TRUE(p.recv->irecv(in[i].data(), in[i].size(), i, nullptr, &r.req).isOk());
    reqs.push_back(r);
  }
  for (int i = 0; i < kCount; ++i) {
    testing::Pending s(p.sender.get());
    ASSERT_TRUE(p.send->isend(out[i].data(), out[i].size(), i, nullptr, &s.req).isOk());
    reqs.push_back(s);
  }
  testing::driveAll(reqs, *p.sender, *p.receiver);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(reqs[i].status.isOk()) << i << ": " << reqs[i].status.message();
    ASSERT_EQ(reqs[i].size, out[i].size()) << i;
    EXPECT_EQ(in[i], out[i]) << i;
  }
}

TEST_F(IbVerbs, OversizedAndNullSendsAreRefusedUpFront) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  Request* req = reinterpret_cast<Request*>(1);
  uint8_t byte = 0;
  EXPECT_EQ(p.send->isend(&byte, size_t{1} << 32, 1, nullptr, &req).code(), Code::kInvalidArgument);
  EXPECT_EQ(req, nullptr);
  EXPECT_EQ(p.send->isend(nullptr, 8, 1, nullptr, &req).code(), Code::kInvalidArgument);
  EXPECT_EQ(p.recv->irecv(nullptr, 8, 1, nullptr, &req).code(), Code::kInvalidArgument);
  EXPECT_EQ(req, nullptr);
}

}  // namespace
}  // namespace braid::transport

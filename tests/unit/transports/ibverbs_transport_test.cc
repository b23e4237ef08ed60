// What the ibverbs transport adds to transport.h's contract (which
// transport_contract_test.cc checks on it): its devices, and strangers on its
// side channel. Run over fake_verbs/, the in-process RDMA fabric, since this
// machine has none; the real libibverbs is what BRAID_IB_LIBRARY replaces.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tcp_test_util.h"
#include "tests/common/fake_verbs_count.h"
#include "transports/ibverbs/ib_comm.h"
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
    for (const char* name : {"BRAID_FAKE_VERBS_DEVICES", "BRAID_FAKE_VERBS_LINK", "BRAID_IB_HCA",
                             "BRAID_IB_TC", "BRAID_IB_SL", "BRAID_IB_TIMEOUT", "BRAID_IB_RETRY_CNT"})
      unsetenv(name);
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

uint64_t registrations() { return test::fakeVerbsRegistrations(BRAID_FAKE_VERBS_PATH); }

// Messages past the bounce slots, sent from and received into buffers
// registered once (regMr): no ibv_reg_mr per message at either end, and the
// data lands (the fake checks each write's lkey and rkey against the range).
// The same messages without handles register twice each.
TEST_F(IbVerbs, RegisteredBuffersSpareTheirMessagesARegistration) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  EXPECT_TRUE(p.sender->capabilities().registersMemory);
  constexpr size_t kPiece = 64 << 10;
  constexpr int kMessages = 8;
  std::vector<uint8_t> out = testing::pattern(kPiece * kMessages, 7), in(kPiece * kMessages, 0);
  void *sendHandle = nullptr, *recvHandle = nullptr;
  ASSERT_TRUE(p.sender->regMr(out.data(), out.size(), &sendHandle).isOk());
  ASSERT_TRUE(p.receiver->regMr(in.data(), in.size(), &recvHandle).isOk());
  ASSERT_NE(sendHandle, nullptr);
  ASSERT_NE(recvHandle, nullptr);

  auto exchange = [&](bool withHandles) {
    std::fill(in.begin(), in.end(), 0);
    std::vector<testing::Pending> reqs;
    for (int i = 0; i < kMessages; ++i) {
      testing::Pending r(p.receiver.get()), s(p.sender.get());
      ASSERT_TRUE(p.recv->irecv(in.data() + i * kPiece, kPiece, i, withHandles ? recvHandle : nullptr, &r.req)
                      .isOk());
      ASSERT_TRUE(
          p.send->isend(out.data() + i * kPiece, kPiece, i, withHandles ? sendHandle : nullptr, &s.req)
              .isOk());
      reqs.push_back(r);
      reqs.push_back(s);
    }
    testing::driveAll(reqs, *p.sender, *p.receiver);
    for (const testing::Pending& r : reqs) ASSERT_TRUE(r.status.isOk()) << r.status.message();
    EXPECT_EQ(in, out);
  };
  const uint64_t before = registrations();
  ASSERT_NO_FATAL_FAILURE(exchange(true));
  EXPECT_EQ(registrations(), before);
  ASSERT_NO_FATAL_FAILURE(exchange(false));
  EXPECT_EQ(registrations(), before + 2 * kMessages);
  EXPECT_TRUE(p.sender->deregMr(sendHandle).isOk());
  EXPECT_TRUE(p.receiver->deregMr(recvHandle).isOk());
}

// A message outside the handle passed with it is refused before it takes a
// place in the connection's order, so the next message still matches.
TEST_F(IbVerbs, AMessageOutsideItsHandleIsRefusedAndTheConnectionGoesOn) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  std::vector<uint8_t> out = testing::pattern(32 << 10, 3), in(32 << 10, 0);
  void* handle = nullptr;
  ASSERT_TRUE(p.sender->regMr(out.data(), 16 << 10, &handle).isOk());
  Request* req = reinterpret_cast<Request*>(1);
  Status st = p.send->isend(out.data() + 8192, 16 << 10, 1, handle, &req);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("outside the registered buffer"), std::string::npos) << st.message();
  EXPECT_EQ(req, nullptr);

  testing::Pending r(p.receiver.get()), s(p.sender.get());
  ASSERT_TRUE(p.recv->irecv(in.data(), in.size(), 1, nullptr, &r.req).isOk());
  ASSERT_TRUE(p.send->isend(out.data(), 16 << 10, 1, handle, &s.req).isOk());
  std::vector<testing::Pending> reqs = {r, s};
  testing::driveAll(reqs, *p.sender, *p.receiver);
  ASSERT_TRUE(reqs[0].status.isOk()) << reqs[0].status.message();
  ASSERT_EQ(reqs[0].size, size_t{16} << 10);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + (16 << 10), in.begin()));
  EXPECT_TRUE(p.sender->deregMr(handle).isOk());
}

// The peer sends its last message and closes between a poll of ours that
// found nothing and the liveness check that follows it (the fake's hook puts
// it exactly there). The message is in our completion queue by then: its
// receive succeeds instead of failing on "closed the side channel". In CI
// this raced a survivor's first call after a shrink against the neighbour
// that finished it and destroyed the communicator.
TEST_F(IbVerbs, AMessageSentJustBeforeThePeerClosedIsReceived) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  struct Closing {
    Pair* pair;
    std::vector<uint8_t> out = testing::pattern(1000, 5);
    Status sent = internalError("the hook never ran");
  } closing{&p};
  std::vector<uint8_t> in(closing.out.size(), 0);
  testing::Pending r(p.receiver.get());
  ASSERT_TRUE(p.recv->irecv(in.data(), in.size(), 4, nullptr, &r.req).isOk());
  // irecv looked at the peer just now; after kLivenessEvery the next poll
  // without news looks again.
  std::this_thread::sleep_for(3 * ibverbs::IbComm::kLivenessEvery);
  auto sendAndClose = [](void* arg) {
    auto* c = static_cast<Closing*>(arg);
    testing::Pending s(c->pair->sender.get());
    c->sent = c->pair->send->isend(c->out.data(), c->out.size(), 4, nullptr, &s.req);
    for (Deadline deadline(5000); c->sent.isOk() && !s.done && !deadline.expired();)
      c->sent = s.transport->test(s.req, &s.done, &s.size);
    if (c->sent.isOk() && !s.done) c->sent = internalError("the send did not finish");
    c->pair->send.reset();  // says goodbye and closes the side channel
  };
  ASSERT_TRUE(test::fakeVerbsAfterEmptyPoll(BRAID_FAKE_VERBS_PATH, sendAndClose, &closing));
  for (Deadline deadline(5000); !r.done && !deadline.expired();) {
    r.status = p.receiver->test(r.req, &r.done, &r.size);
    if (!r.done) {
      ASSERT_TRUE(p.receiver->wait(1).isOk());
    }
  }
  ASSERT_TRUE(closing.sent.isOk()) << closing.sent.message();
  ASSERT_TRUE(r.done);
  ASSERT_TRUE(r.status.isOk()) << r.status.message();
  EXPECT_EQ(r.size, closing.out.size());
  EXPECT_EQ(in, closing.out);
}

// Read-only memory (a const table) cannot be pinned for writing: it is
// registered read-only, and sends go from it without a registration each.
TEST_F(IbVerbs, ReadOnlyMemoryRegistersForSends) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  constexpr size_t kBytes = 64 << 10;
  void* map = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  const std::vector<uint8_t> expected = testing::pattern(kBytes, 5);
  std::memcpy(map, expected.data(), kBytes);
  ASSERT_EQ(mprotect(map, kBytes, PROT_READ), 0);
  std::vector<uint8_t> in(kBytes, 0);
  void* handle = nullptr;
  ASSERT_TRUE(p.sender->regMr(map, kBytes, &handle).isOk());
  const uint64_t before = registrations();
  testing::Pending r(p.receiver.get()), s(p.sender.get());
  ASSERT_TRUE(p.recv->irecv(in.data(), in.size(), 2, nullptr, &r.req).isOk());
  ASSERT_TRUE(p.send->isend(map, kBytes, 2, handle, &s.req).isOk());
  std::vector<testing::Pending> reqs = {r, s};
  testing::driveAll(reqs, *p.sender, *p.receiver);
  ASSERT_TRUE(reqs[0].status.isOk()) << reqs[0].status.message();
  ASSERT_TRUE(reqs[1].status.isOk()) << reqs[1].status.message();
  EXPECT_EQ(in, expected);
  EXPECT_EQ(registrations(), before + 1);  // the receive's, unregistered
  EXPECT_TRUE(p.sender->deregMr(handle).isOk());
  munmap(map, kBytes);
}

TEST_F(IbVerbs, QueuePairsTakeTheirPathFromTheEnvironment) {
  {
    Pair p;
    ASSERT_NO_FATAL_FAILURE(connect(&p));
    const test::FakeVerbsPath path = test::fakeVerbsLastPath(BRAID_FAKE_VERBS_PATH);
    EXPECT_EQ(path.serviceLevel, 0);
    EXPECT_EQ(path.global, 0);  // InfiniBand: routed by LID
    EXPECT_EQ(path.timeout, 14);
    EXPECT_EQ(path.retryCount, 7);
  }
  setenv("BRAID_IB_SL", "3", 1);
  setenv("BRAID_IB_TIMEOUT", "18", 1);
  setenv("BRAID_IB_RETRY_CNT", "5", 1);
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  const test::FakeVerbsPath path = test::fakeVerbsLastPath(BRAID_FAKE_VERBS_PATH);
  EXPECT_EQ(path.serviceLevel, 3);
  EXPECT_EQ(path.timeout, 18);
  EXPECT_EQ(path.retryCount, 5);
}

// RoCE: addressed by GID (entry 3 where set) through a global route header,
// which carries BRAID_IB_TC; data moves as on InfiniBand.
TEST_F(IbVerbs, RoCEQueuePairsCarryTheTrafficClass) {
  setenv("BRAID_FAKE_VERBS_LINK", "ethernet", 1);
  setenv("BRAID_IB_TC", "106", 1);
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect(&p));
  DeviceProperties props;
  ASSERT_TRUE(p.sender->deviceProperties(0, &props).isOk());
  EXPECT_EQ(props.address.rfind("gid ", 0), 0u) << props.address;
  const test::FakeVerbsPath path = test::fakeVerbsLastPath(BRAID_FAKE_VERBS_PATH);
  EXPECT_EQ(path.global, 1);
  EXPECT_EQ(path.trafficClass, 106);

  std::vector<uint8_t> out = testing::pattern(20000, 9), in(20000, 0);
  testing::Pending r(p.receiver.get()), s(p.sender.get());
  ASSERT_TRUE(p.recv->irecv(in.data(), in.size(), 4, nullptr, &r.req).isOk());
  ASSERT_TRUE(p.send->isend(out.data(), out.size(), 4, nullptr, &s.req).isOk());
  std::vector<testing::Pending> reqs = {r, s};
  testing::driveAll(reqs, *p.sender, *p.receiver);
  ASSERT_TRUE(reqs[0].status.isOk()) << reqs[0].status.message();
  EXPECT_EQ(in, out);
}

TEST_F(IbVerbs, PathSettingsOutOfRangeAreRefusedAtCreation) {
  for (auto [name, value] :
       {std::pair{"BRAID_IB_SL", "16"}, std::pair{"BRAID_IB_TC", "256"}, std::pair{"BRAID_IB_TC", "lossless"},
        std::pair{"BRAID_IB_TIMEOUT", "0"}, std::pair{"BRAID_IB_TIMEOUT", "32"},
        std::pair{"BRAID_IB_RETRY_CNT", "8"}, std::pair{"BRAID_IB_RETRY_CNT", "-1"}}) {
    setenv(name, value, 1);
    std::unique_ptr<Transport> t;
    Status st = create(&t);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << name << "=" << value;
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
    EXPECT_EQ(t, nullptr);
    unsetenv(name);
  }
}

}  // namespace
}  // namespace braid::transport

// The TCP transport against peers that are not genuine: strangers at the
// listener (wrong secret, garbage, silence) and a corrupted data stream.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "tcp_test_util.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"
#include "transports/tcp/frame.h"

namespace braid::transport {
namespace {

using testing::connectPair;
using testing::tcpOptions;

// The listener address inside a tcp handle (frame.h layout: magic, version, pad, address).
net::SocketAddress handleAddress(const Handle& h) {
  net::SocketAddress a;
  EXPECT_TRUE(net::SocketAddress::unpack(h.bytes.data() + 8, &a).isOk());
  return a;
}

class TcpListener : public ::testing::Test {
 protected:
  // Long enough that a loaded CI machine still lets the genuine peer in while
  // the silent stranger is connected (the point of the test).
  static constexpr int kHandshakeMs = 3000;
  void SetUp() override {
    ASSERT_TRUE(createTransport("tcp", tcpOptions(2, 1, kHandshakeMs), &receiver_).isOk());
    ASSERT_TRUE(createTransport("tcp", tcpOptions(2, 1, kHandshakeMs), &sender_).isOk());
    ASSERT_TRUE(receiver_->listen(0, &handle_, &listener_).isOk());
  }
  net::Fd rawConnect() {
    net::Fd fd;
    EXPECT_TRUE(net::connectTo(handleAddress(handle_), Deadline(2000), &fd).isOk());
    return fd;
  }
  // Drives accept (and a genuine connect when asked) until a comm is accepted.
  void acceptGenuine(std::unique_ptr<RecvComm>* recv, std::unique_ptr<SendComm>* send, int timeoutMs) {
    Deadline deadline(timeoutMs);
    uint64_t id = 0;
    while (!(*recv && *send) && !deadline.expired()) {
      if (!*send) {
        ASSERT_TRUE(sender_->connect(0, handle_, 77, send).isOk());
      }
      if (!*recv) {
        ASSERT_TRUE(receiver_->accept(*listener_, recv, &id).isOk());
      }
      ASSERT_TRUE(sender_->wait(1).isOk());
      ASSERT_TRUE(receiver_->wait(1).isOk());
    }
    ASSERT_TRUE(*recv && *send) << "genuine connection not accepted within " << timeoutMs << " ms";
    EXPECT_EQ(id, 77u);
  }
  // Drives accept until `done` (another thread's handshake finished), so that
  // the listener keeps judging strangers after the genuine peer got in.
  bool driveUntil(const std::atomic<bool>& done, int timeoutMs) {
    Deadline deadline(timeoutMs);
    while (!done.load() && !deadline.expired()) {
      std::unique_ptr<RecvComm> none;
      EXPECT_TRUE(receiver_->accept(*listener_, &none, nullptr).isOk());
      EXPECT_EQ(none, nullptr) << "a stranger was accepted";
      EXPECT_TRUE(receiver_->wait(5).isOk());
    }
    return done.load();
  }
  // True once the listener closed `fd` (EOF or reset), driving accept meanwhile.
  bool closedByListener(int fd, int timeoutMs) {
    Deadline deadline(timeoutMs);
    while (!deadline.expired()) {
      std::unique_ptr<RecvComm> none;
      EXPECT_TRUE(receiver_->accept(*listener_, &none, nullptr).isOk());
      EXPECT_EQ(none, nullptr) << "a stranger was accepted";
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 5) > 0) {
        char buf[64];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      }
    }
    return false;
  }

  std::unique_ptr<Transport> sender_, receiver_;
  Handle handle_;
  std::unique_ptr<ListenComm> listener_;
};

TEST_F(TcpListener, StrangersDoNotDelayGenuinePeer) {
  net::Fd silent = rawConnect();
  net::Fd garbage = rawConnect();
  std::mt19937 rng(11);
  uint8_t junk[64];
  for (auto& b : junk) b = static_cast<uint8_t>(rng());
  ASSERT_TRUE(net::sendAll(garbage.get(), junk, sizeof(junk), Deadline(1000)).isOk());
  // A stranger that speaks the protocol but has another secret.
  net::Fd wrongSecret = rawConnect();
  Secret other{};
  std::atomic<bool> strangerDone{false};
  std::thread stranger([&] {
    Status st = net::authenticateConnector(wrongSecret.get(), other, net::Purpose::kTcpData, 5,
                                           Deadline(5 * kHandshakeMs));
    EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
    strangerDone = true;
  });

  std::unique_ptr<RecvComm> recv;
  std::unique_ptr<SendComm> send;
  acceptGenuine(&recv, &send, 5 * kHandshakeMs);
  // The listener only judges handshakes while it is driven; the stranger may
  // not have been judged yet when the genuine peer got in.
  EXPECT_TRUE(driveUntil(strangerDone, 5 * kHandshakeMs)) << "wrong-secret stranger never rejected";
  stranger.join();
  // The genuine peer did not wait for the silent stranger's handshake deadline:
  // that stranger is still connected now.
  pollfd p{silent.get(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the silent stranger was dropped before the genuine peer got in";

  EXPECT_TRUE(closedByListener(garbage.get(), 5 * kHandshakeMs)) << "garbage sender not dropped";
  EXPECT_TRUE(closedByListener(wrongSecret.get(), 5 * kHandshakeMs)) << "wrong-secret stranger not dropped";
  EXPECT_TRUE(closedByListener(silent.get(), 5 * kHandshakeMs)) << "silent stranger not dropped";

  // The genuine connection works.
  uint64_t out = 0x0123456789abcdef, in = 0;
  std::vector<testing::Pending> reqs = {testing::Pending(sender_.get()), testing::Pending(receiver_.get())};
  ASSERT_TRUE(send->isend(&out, 8, 1, nullptr, &reqs[0].req).isOk());
  ASSERT_TRUE(recv->irecv(&in, 8, 1, nullptr, &reqs[1].req).isOk());
  testing::driveAll(reqs, *sender_, *receiver_);
  EXPECT_EQ(in, out);
}

TEST_F(TcpListener, AuthenticatedButMalformedConnectionHeaderIsDropped) {
  net::Fd fd = rawConnect();
  std::atomic<bool> peerDone{false};
  std::thread peer([&] {
    ASSERT_TRUE(net::authenticateConnector(fd.get(), tcpOptions(2).secret, net::Purpose::kTcpData, 5, Deadline(2000))
                    .isOk());
    tcp::ConnHeader h;
    h.nSocks = 2, h.index = 5;  // index out of range
    ASSERT_TRUE(net::sendAll(fd.get(), &h, sizeof(h), Deadline(1000)).isOk());
    peerDone = true;
  });
  // Drive the listener until the peer's handshake is through; only then read
  // its socket (reading earlier would steal the handshake's bytes).
  Deadline deadline(2000);
  while (!peerDone && !deadline.expired()) {
    std::unique_ptr<RecvComm> none;
    ASSERT_TRUE(receiver_->accept(*listener_, &none, nullptr).isOk());
    ASSERT_TRUE(receiver_->wait(1).isOk());
  }
  peer.join();
  EXPECT_TRUE(closedByListener(fd.get(), 2000));
}

// A peer that authenticates, then sends frames the test builds by hand.
class RawSender : public TcpListener {
 protected:
  void connectRaw() {
    fd_ = rawConnect();
    std::thread peer([&] {
      ASSERT_TRUE(
          net::authenticateConnector(fd_.get(), tcpOptions(1).secret, net::Purpose::kTcpData, 9, Deadline(2000)).isOk());
      tcp::ConnHeader h;
      h.nSocks = 1, h.index = 0, h.connId = 1234;
      ASSERT_TRUE(net::sendAll(fd_.get(), &h, sizeof(h), Deadline(1000)).isOk());
    });
    Deadline deadline(2000);
    while (!recv_ && !deadline.expired()) {
      ASSERT_TRUE(receiver_->accept(*listener_, &recv_, nullptr).isOk());
      ASSERT_TRUE(receiver_->wait(1).isOk());
    }
    peer.join();
    ASSERT_NE(recv_, nullptr);
  }
  Status receiveOne(uint32_t tag, size_t capacity) {
    buf_.resize(capacity);
    std::vector<testing::Pending> reqs = {testing::Pending(receiver_.get())};
    EXPECT_TRUE(recv_->irecv(buf_.data(), capacity, tag, nullptr, &reqs[0].req).isOk());
    testing::driveAll(reqs, *receiver_, *receiver_, 2000);
    return reqs[0].status;
  }
  void sendHeader(const tcp::FrameHeader& h) {
    uint8_t bytes[tcp::kFrameHeaderBytes];
    tcp::encodeFrame(h, bytes);
    ASSERT_TRUE(net::sendAll(fd_.get(), bytes, sizeof(bytes), Deadline(1000)).isOk());
  }
  net::Fd fd_;
  std::unique_ptr<RecvComm> recv_;
  std::vector<uint8_t> buf_;
};

TEST_F(RawSender, WellFormedFrameIsReceived) {
  connectRaw();
  tcp::FrameHeader h;
  h.tag = 4, h.total = 3, h.partSize = 3, h.seq = 0, h.nParts = 1;
  sendHeader(h);
  ASSERT_TRUE(net::sendAll(fd_.get(), "abc", 3, Deadline(1000)).isOk());
  Status st = receiveOne(4, 10);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(std::memcmp(buf_.data(), "abc", 3), 0);
}

TEST_F(RawSender, CorruptedHeaderIsRemoteError) {
  connectRaw();
  tcp::FrameHeader h;
  h.tag = 4, h.total = 3, h.partSize = 3, h.seq = 0, h.nParts = 1;
  uint8_t bytes[tcp::kFrameHeaderBytes];
  tcp::encodeFrame(h, bytes);
  bytes[12] ^= 0x01;  // one bit of the size flips on the way
  ASSERT_TRUE(net::sendAll(fd_.get(), bytes, sizeof(bytes), Deadline(1000)).isOk());
  Status st = receiveOne(4, 1 << 20);
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_NE(st.message().find("corrupted frame header"), std::string::npos) << st.message();
}

TEST_F(RawSender, OutOfStepFrameIsRemoteError) {
  connectRaw();
  tcp::FrameHeader h;
  h.tag = 4, h.total = 3, h.partSize = 3, h.seq = 5, h.nParts = 1;  // message 5 where 0 is due
  sendHeader(h);
  Status st = receiveOne(4, 10);
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_NE(st.message().find("out of step"), std::string::npos) << st.message();
}

TEST_F(RawSender, PeerCloseMidMessageIsRemoteError) {
  connectRaw();
  tcp::FrameHeader h;
  h.tag = 4, h.total = 100, h.partSize = 100, h.seq = 0, h.nParts = 1;
  sendHeader(h);
  ASSERT_TRUE(net::sendAll(fd_.get(), "only part", 9, Deadline(1000)).isOk());
  fd_.reset();
  Status st = receiveOne(4, 100);
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_NE(st.message().find("connection closed by peer"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace braid::transport

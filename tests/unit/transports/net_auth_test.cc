#include <gtest/gtest.h>
#include <poll.h>

#include <cstring>
#include <random>
#include <vector>

#include "net_test_util.h"
#include "transports/net/auth.h"

namespace braid::net {
namespace {

using transport::Secret;

Secret makeSecret(uint8_t first) {
  Secret s;
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(first + i);
  return s;
}

// Reference vectors of the SipHash paper / reference implementation: key
// 00 01 .. 0f, message 00 01 .. (len-1), output as a little-endian u64.
TEST(SipHash, ReferenceVectors) {
  const Secret key = makeSecret(0);
  const uint64_t expected[] = {0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
                               0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
                               0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7};
  uint8_t msg[16];
  for (int i = 0; i < 16; ++i) msg[i] = static_cast<uint8_t>(i);
  for (size_t len = 0; len < std::size(expected); ++len)
    EXPECT_EQ(sipHash24(key, msg, len), expected[len]) << "length " << len;
  // The worked example of the paper (appendix A): 15 bytes.
  EXPECT_EQ(sipHash24(key, msg, 15), 0xa129ca6149be45e5ULL);
}

TEST(ConstantTimeEqual, ComparesBytes) {
  uint8_t a[5] = {1, 2, 3, 4, 5}, b[5] = {1, 2, 3, 4, 5};
  EXPECT_TRUE(constantTimeEqual(a, b, 5));
  b[4] = 6;
  EXPECT_FALSE(constantTimeEqual(a, b, 5));
  EXPECT_TRUE(constantTimeEqual(a, b, 4));
  EXPECT_TRUE(constantTimeEqual(a, b, 0));
}

TEST(RandomBytes, FillsAndDiffers) {
  uint64_t x = 0, y = 0;
  ASSERT_TRUE(randomBytes(&x, sizeof(x)).isOk());
  ASSERT_TRUE(randomBytes(&y, sizeof(y)).isOk());
  EXPECT_NE(x, y);  // equal with probability 2^-64
}

class Handshake : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(testing::loopbackPair("127.0.0.1", &client_, &server_).isOk()); }

  // Drives both sides from this thread until both finished or one failed.
  void run(const Secret& connectorSecret, const Secret& acceptorSecret, Purpose cPurpose, Purpose aPurpose,
           Status* cStatus, Status* aStatus, uint64_t* acceptedId) {
    ConnectorHandshake c(connectorSecret, cPurpose, 0x1122334455667788ULL);
    AcceptorHandshake a(acceptorSecret, aPurpose);
    bool cDone = false, aDone = false;
    Deadline deadline(5000);
    while (!deadline.expired()) {
      if (!cDone && cStatus->isOk()) *cStatus = c.step(client_.get(), &cDone);
      if (!aDone && aStatus->isOk()) *aStatus = a.step(server_.get(), &aDone);
      bool cActive = !cDone && cStatus->isOk(), aActive = !aDone && aStatus->isOk();
      if (!cActive && !aActive) break;
      pollfd p[2] = {{client_.get(), static_cast<short>(c.wantsWrite() ? POLLOUT : POLLIN), 0},
                     {server_.get(), static_cast<short>(a.wantsWrite() ? POLLOUT : POLLIN), 0}};
      poll(p, 2, 100);
      // The first side to fail closes its end, as a real caller would.
      if (!cStatus->isOk()) client_.reset();
      if (!aStatus->isOk()) server_.reset();
      if (!client_.valid() && aActive) continue;
    }
    if (aDone) *acceptedId = a.connectorId();
  }

  // Acceptor against raw bytes written by the test: the acceptor's status.
  Status acceptRaw(const std::vector<uint8_t>& bytes, int silenceMs = 200) {
    EXPECT_TRUE(sendAll(client_.get(), bytes.data(), bytes.size(), Deadline(1000)).isOk());
    AcceptorHandshake a(makeSecret(1), Purpose::kTcpData);
    Deadline deadline(silenceMs);
    while (!deadline.expired()) {
      bool done = false;
      Status st = a.step(server_.get(), &done);
      if (!st.isOk()) return st;
      if (done) return internalError("acceptor accepted raw bytes");
      pollfd p{server_.get(), static_cast<short>(a.wantsWrite() ? POLLOUT : POLLIN), 0};
      poll(&p, 1, deadline.remainingMs());
    }
    return timeoutError("still waiting");
  }

  std::vector<uint8_t> hello(uint32_t magic, uint16_t version, uint16_t purpose) {
    std::vector<uint8_t> b(kHelloBytes);
    std::memcpy(&b[0], &magic, 4), std::memcpy(&b[4], &version, 2), std::memcpy(&b[6], &purpose, 2);
    uint64_t nonce = 42;
    std::memcpy(&b[8], &nonce, 8);
    return b;
  }

  Fd client_, server_;
};

TEST_F(Handshake, SameSecretSucceedsAndCarriesId) {
  Status c, a;
  uint64_t id = 0;
  run(makeSecret(1), makeSecret(1), Purpose::kTcpData, Purpose::kTcpData, &c, &a, &id);
  ASSERT_TRUE(c.isOk()) << c.message();
  ASSERT_TRUE(a.isOk()) << a.message();
  EXPECT_EQ(id, 0x1122334455667788ULL);
  // The stream after the handshake is untouched: application bytes follow.
  uint32_t word = 0xabcdef01, back = 0;
  ASSERT_TRUE(sendAll(client_.get(), &word, 4, Deadline(1000)).isOk());
  ASSERT_TRUE(recvAll(server_.get(), &back, 4, Deadline(1000)).isOk());
  EXPECT_EQ(back, word);
}

TEST_F(Handshake, WrongSecretFailsOnBothSides) {
  Status c, a;
  uint64_t id = 0;
  run(makeSecret(1), makeSecret(2), Purpose::kTcpData, Purpose::kTcpData, &c, &a, &id);
  EXPECT_EQ(c.code(), Code::kRemoteError) << c.message();
  EXPECT_NE(c.message().find("secret"), std::string::npos) << c.message();
  EXPECT_EQ(a.code(), Code::kRemoteError) << a.message();
}

TEST_F(Handshake, WrongPurposeIsRejected) {
  Status c, a;
  uint64_t id = 0;
  run(makeSecret(1), makeSecret(1), Purpose::kBootstrap, Purpose::kTcpData, &c, &a, &id);
  EXPECT_EQ(a.code(), Code::kRemoteError) << a.message();
  EXPECT_NE(a.message().find("purpose"), std::string::npos) << a.message();
  EXPECT_FALSE(c.isOk());
}

TEST_F(Handshake, AcceptorRejectsWrongMagicAndVersion) {
  Status st = acceptRaw(hello(0xdeadbeef, kAuthVersion, 2));
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("magic"), std::string::npos) << st.message();
}

TEST_F(Handshake, AcceptorRejectsWrongVersion) {
  Status st = acceptRaw(hello(kAuthMagic, kAuthVersion + 1, 2));
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("version"), std::string::npos) << st.message();
}

TEST_F(Handshake, AcceptorRejectsRandomBytes) {
  std::mt19937 rng(7);
  std::vector<uint8_t> junk(64);
  for (auto& b : junk) b = static_cast<uint8_t>(rng());
  Status st = acceptRaw(junk);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
}

TEST_F(Handshake, AcceptorRejectsForgedAnswer) {
  // A stranger that speaks the format but not the secret: valid hello, then an
  // answer with a made-up MAC.
  std::vector<uint8_t> bytes = hello(kAuthMagic, kAuthVersion, 2);
  bytes.resize(kHelloBytes + kAnswerBytes, 0x5a);
  Status st = acceptRaw(bytes);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("secret"), std::string::npos) << st.message();
}

TEST_F(Handshake, AcceptorWaitsOnSilenceWithoutFailing) {
  // Silence is not an error for the state machine: the caller's clock drops it.
  Status st = acceptRaw({}, 50);
  EXPECT_EQ(st.code(), Code::kTimeout) << st.message();
}

TEST_F(Handshake, ConnectorRejectsForgedChallenge) {
  std::vector<uint8_t> challenge(kChallengeBytes, 0x33);
  std::memcpy(&challenge[0], &kAuthMagic, 4);
  ASSERT_TRUE(sendAll(server_.get(), challenge.data(), challenge.size(), Deadline(1000)).isOk());
  Status st = authenticateConnector(client_.get(), makeSecret(1), Purpose::kBootstrap, 3, Deadline(1000));
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
}

TEST_F(Handshake, ConnectorTimesOutOnSilentPeer) {
  auto start = Clock::now();
  Status st = authenticateConnector(client_.get(), makeSecret(1), Purpose::kBootstrap, 3, Deadline(100));
  EXPECT_EQ(st.code(), Code::kTimeout) << st.message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace braid::net

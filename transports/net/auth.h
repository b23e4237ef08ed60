// Proof of the communicator's secret on a fresh connection, before any data.
//
// Mutual challenge-response with a keyed MAC (SipHash-2-4 keyed by the 128-bit
// secret, whose key size it matches): neither side ever sends the secret, a
// replayed transcript fails (fresh nonces both ways), and the MAC comparison is
// constant-time. The connector also tells the acceptor a 64-bit id (its rank)
// and a purpose tag (bootstrap / tcp data), which the MAC covers.
//
// Any byte stream carries it (HandshakeChannel): TCP sockets, UCX streams.
//
// Wire (all little-endian):
//   C->A  hello  : magic u32, version u16, purpose u16, nonceC u64
//   A->C  chall  : magic u32, nonceA u64, macA u64 = MAC(secret, "A", nonceC, nonceA, purpose)
//   C->A  answer : connectorId u64, macC u64 = MAC(secret, "C", nonceC, nonceA, purpose, connectorId)
// Any mismatch closes the connection.
#pragma once

#include <cstdint>

#include "base/deadline.h"
#include "base/status.h"
#include "transports/transport.h"

namespace braid::net {

enum class Purpose : uint16_t { kBootstrap = 1, kTcpData = 2, kUcxData = 3, kNetPluginData = 4, kIbData = 5 };

// Where a handshake's bytes travel: a socket (the fd overloads below wrap
// one), or a transport's own byte stream (the UCX transport's stream API).
// Both calls are non-blocking: they move what they can of buf[*have, want)
// and advance *have; a broken channel is an error.
class HandshakeChannel {
 public:
  virtual Status send(const uint8_t* buf, size_t want, size_t* have) = 0;
  virtual Status recv(uint8_t* buf, size_t want, size_t* have) = 0;

 protected:
  ~HandshakeChannel() = default;
};

// SipHash-2-4 of data under a 128-bit key.
uint64_t sipHash24(const transport::Secret& key, const void* data, size_t size);
// Constant-time equality of two byte strings.
bool constantTimeEqual(const void* a, const void* b, size_t size);
// Fresh random bytes from getrandom(2).
Status randomBytes(void* out, size_t size);

// Wire constants (see the format above).
constexpr uint32_t kAuthMagic = 0x48414242;  // "BBAH" little-endian: braid auth hello
constexpr uint16_t kAuthVersion = 1;
constexpr size_t kHelloBytes = 16, kChallengeBytes = 20, kAnswerBytes = 16;

// Blocking (deadline-bounded) handshakes on a connected non-blocking socket.
// Fails with RemoteError when the peer is not a braid endpoint or does not know
// the secret, Timeout when it stays silent past the deadline.
Status authenticateConnector(int fd, const transport::Secret& secret, Purpose purpose,
                             uint64_t connectorId, const Deadline& deadline);

// Non-blocking connector side (used by transports whose connect() must not
// block, e.g. when one thread both connects and accepts). Same contract as
// AcceptorHandshake below; the caller bounds the time it is willing to wait.
// Reads exactly the challenge bytes, so the stream after it is untouched.
class ConnectorHandshake {
 public:
  ConnectorHandshake(const transport::Secret& secret, Purpose purpose, uint64_t connectorId);
  Status step(int fd, bool* finished);
  Status step(HandshakeChannel& channel, bool* finished);
  bool wantsWrite() const;

 private:
  enum class Phase { kStart, kWriteHello, kReadChallenge, kWriteAnswer, kDone };
  transport::Secret secret_;
  Purpose purpose_;
  uint64_t connectorId_;
  Phase phase_ = Phase::kStart;
  uint8_t buf_[32] = {};
  size_t have_ = 0;
  uint64_t nonceC_ = 0;
};

// Non-blocking acceptor side, so that one stalled stranger never delays a genuine
// peer: feed it when the fd is readable/writable; step() returns ok with
// *finished=false while waiting, ok with *finished=true once the peer proved the
// secret (connectorId() is then valid), an error when it failed (drop the fd).
// Reads exactly the hello and answer bytes, so data the connector sends after
// the answer stays in the socket for the caller. Silence is the caller's to
// time out (it owns the clock and the poll set).
class AcceptorHandshake {
 public:
  AcceptorHandshake(const transport::Secret& secret, Purpose purpose);
  Status step(int fd, bool* finished);
  Status step(HandshakeChannel& channel, bool* finished);
  uint64_t connectorId() const { return connectorId_; }
  // True while the acceptor waits to write (poll for POLLOUT), else POLLIN.
  bool wantsWrite() const;

 private:
  enum class Phase { kReadHello, kWriteChallenge, kReadAnswer, kDone };
  transport::Secret secret_;
  Purpose purpose_;
  Phase phase_ = Phase::kReadHello;
  uint8_t buf_[32] = {};
  size_t have_ = 0;
  uint64_t nonceC_ = 0, nonceA_ = 0;
  uint64_t connectorId_ = 0;
};

}  // namespace braid::net

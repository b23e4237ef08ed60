// The secret handshake (wire format in auth.h): both sides as non-blocking
// state machines, plus a blocking connector on top for the bootstrap.
#include "transports/net/auth.h"

#include <poll.h>

#include <cstring>

#include "transports/net/socket.h"

namespace braid::net {
namespace {

void put(uint8_t*& p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(const uint8_t*& p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(*p++) << (8 * i);
  return v;
}

// The role letter keeps the acceptor's MAC from ever being replayable as the
// connector's (a stranger cannot reflect our challenge back at us).
uint64_t macAcceptor(const transport::Secret& s, uint64_t nonceC, uint64_t nonceA, Purpose purpose) {
  uint8_t msg[19], *p = msg;
  *p++ = 'A';
  put(p, nonceC, 8), put(p, nonceA, 8), put(p, static_cast<uint16_t>(purpose), 2);
  return sipHash24(s, msg, sizeof(msg));
}
uint64_t macConnector(const transport::Secret& s, uint64_t nonceC, uint64_t nonceA, Purpose purpose,
                      uint64_t connectorId) {
  uint8_t msg[27], *p = msg;
  *p++ = 'C';
  put(p, nonceC, 8), put(p, nonceA, 8), put(p, static_cast<uint16_t>(purpose), 2), put(p, connectorId, 8);
  return sipHash24(s, msg, sizeof(msg));
}

bool macEqual(uint64_t a, uint64_t b) { return constantTimeEqual(&a, &b, sizeof(a)); }

class SocketChannel final : public HandshakeChannel {
 public:
  explicit SocketChannel(int fd) : fd_(fd) {}
  Status send(const uint8_t* buf, size_t want, size_t* have) override {
    return sendSome(fd_, buf + *have, want - *have, have);
  }
  Status recv(uint8_t* buf, size_t want, size_t* have) override {
    return recvSome(fd_, buf + *have, want - *have, have);
  }

 private:
  int fd_;
};

// Moves buf[have, want) in the given direction; true once all of it moved.
Status transfer(HandshakeChannel& channel, bool write, uint8_t* buf, size_t want, size_t* have,
                bool* complete) {
  if (write)
    BRAID_RETURN_IF_ERROR(channel.send(buf, want, have));
  else
    BRAID_RETURN_IF_ERROR(channel.recv(buf, want, have));
  *complete = *have == want;
  return Status::ok();
}

}  // namespace

ConnectorHandshake::ConnectorHandshake(const transport::Secret& secret, Purpose purpose, uint64_t connectorId)
    : secret_(secret), purpose_(purpose), connectorId_(connectorId) {}

bool ConnectorHandshake::wantsWrite() const { return phase_ != Phase::kReadChallenge; }

Status ConnectorHandshake::step(int fd, bool* finished) {
  SocketChannel channel(fd);
  return step(channel, finished);
}

Status ConnectorHandshake::step(HandshakeChannel& channel, bool* finished) {
  *finished = false;
  bool complete = false;
  switch (phase_) {
    case Phase::kStart: {
      BRAID_RETURN_IF_ERROR(randomBytes(&nonceC_, sizeof(nonceC_)));
      uint8_t* p = buf_;
      put(p, kAuthMagic, 4), put(p, kAuthVersion, 2), put(p, static_cast<uint16_t>(purpose_), 2), put(p, nonceC_, 8);
      have_ = 0;
      phase_ = Phase::kWriteHello;
      [[fallthrough]];
    }
    case Phase::kWriteHello:
      BRAID_RETURN_IF_ERROR(transfer(channel, true, buf_, kHelloBytes, &have_, &complete));
      if (!complete) return Status::ok();
      have_ = 0;
      phase_ = Phase::kReadChallenge;
      [[fallthrough]];
    case Phase::kReadChallenge: {
      BRAID_RETURN_IF_ERROR(transfer(channel, false, buf_, kChallengeBytes, &have_, &complete));
      if (!complete) return Status::ok();
      const uint8_t* p = buf_;
      uint32_t magic = static_cast<uint32_t>(get(p, 4));
      uint64_t nonceA = get(p, 8), mac = get(p, 8);
      if (magic != kAuthMagic) return remoteError("peer is not a braid endpoint (bad handshake magic)");
      if (!macEqual(mac, macAcceptor(secret_, nonceC_, nonceA, purpose_)))
        return remoteError("peer failed authentication: it does not know this communicator's secret");
      uint8_t* q = buf_;
      put(q, connectorId_, 8), put(q, macConnector(secret_, nonceC_, nonceA, purpose_, connectorId_), 8);
      have_ = 0;
      phase_ = Phase::kWriteAnswer;
      [[fallthrough]];
    }
    case Phase::kWriteAnswer:
      BRAID_RETURN_IF_ERROR(transfer(channel, true, buf_, kAnswerBytes, &have_, &complete));
      if (!complete) return Status::ok();
      phase_ = Phase::kDone;
      [[fallthrough]];
    case Phase::kDone:
      *finished = true;
      return Status::ok();
  }
  return internalError("ConnectorHandshake: bad phase");
}

Status authenticateConnector(int fd, const transport::Secret& secret, Purpose purpose, uint64_t connectorId,
                             const Deadline& deadline) {
  ConnectorHandshake hs(secret, purpose, connectorId);
  for (;;) {
    bool finished = false;
    BRAID_RETURN_IF_ERROR(hs.step(fd, &finished));
    if (finished) return Status::ok();
    pollfd p{fd, static_cast<short>(hs.wantsWrite() ? POLLOUT : POLLIN), 0};
    int rc = poll(&p, 1, deadline.remainingMs());
    if (rc < 0 && errno != EINTR) return systemError("poll", errno);
    if (rc == 0 && deadline.expired()) return timeoutError("peer did not complete the authentication handshake in time");
  }
}

AcceptorHandshake::AcceptorHandshake(const transport::Secret& secret, Purpose purpose)
    : secret_(secret), purpose_(purpose) {}

bool AcceptorHandshake::wantsWrite() const { return phase_ == Phase::kWriteChallenge; }

Status AcceptorHandshake::step(int fd, bool* finished) {
  SocketChannel channel(fd);
  return step(channel, finished);
}

Status AcceptorHandshake::step(HandshakeChannel& channel, bool* finished) {
  *finished = false;
  bool complete = false;
  switch (phase_) {
    case Phase::kReadHello: {
      BRAID_RETURN_IF_ERROR(transfer(channel, false, buf_, kHelloBytes, &have_, &complete));
      if (!complete) return Status::ok();
      const uint8_t* p = buf_;
      uint32_t magic = static_cast<uint32_t>(get(p, 4));
      uint16_t version = static_cast<uint16_t>(get(p, 2)), purpose = static_cast<uint16_t>(get(p, 2));
      nonceC_ = get(p, 8);
      if (magic != kAuthMagic) return remoteError("peer is not a braid endpoint (bad handshake magic)");
      if (version != kAuthVersion)
        return remoteError("peer speaks handshake version " + std::to_string(version) + ", this build speaks " +
                           std::to_string(kAuthVersion));
      if (purpose != static_cast<uint16_t>(purpose_))
        return remoteError("peer connected for purpose " + std::to_string(purpose) + ", this endpoint serves " +
                           std::to_string(static_cast<uint16_t>(purpose_)));
      BRAID_RETURN_IF_ERROR(randomBytes(&nonceA_, sizeof(nonceA_)));
      uint8_t* q = buf_;
      put(q, kAuthMagic, 4), put(q, nonceA_, 8), put(q, macAcceptor(secret_, nonceC_, nonceA_, purpose_), 8);
      have_ = 0;
      phase_ = Phase::kWriteChallenge;
      [[fallthrough]];
    }
    case Phase::kWriteChallenge:
      BRAID_RETURN_IF_ERROR(transfer(channel, true, buf_, kChallengeBytes, &have_, &complete));
      if (!complete) return Status::ok();
      have_ = 0;
      phase_ = Phase::kReadAnswer;
      [[fallthrough]];
    case Phase::kReadAnswer: {
      BRAID_RETURN_IF_ERROR(transfer(channel, false, buf_, kAnswerBytes, &have_, &complete));
      if (!complete) return Status::ok();
      const uint8_t* p = buf_;
      uint64_t id = get(p, 8), mac = get(p, 8);
      if (!macEqual(mac, macConnector(secret_, nonceC_, nonceA_, purpose_, id)))
        return remoteError("peer failed authentication: it does not know this communicator's secret");
      connectorId_ = id;
      phase_ = Phase::kDone;
      [[fallthrough]];
    }
    case Phase::kDone:
      *finished = true;
      return Status::ok();
  }
  return internalError("AcceptorHandshake: bad phase");
}

}  // namespace braid::net

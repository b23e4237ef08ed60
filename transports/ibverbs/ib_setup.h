// Setting up an ibverbs connection over its TCP side channel (ib_wire.h):
// IbConnect is one Transport::connect() in progress, IbAccept one
// connection the listener took; both are non-blocking state machines, so one
// thread may connect and accept at once (a ring of ranks each connecting to
// the next and accepting from the previous).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "transports/ibverbs/ib_comm.h"
#include "transports/ibverbs/ib_queue_pair.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::ibverbs {

// Bytes to move on the side channel, one way.
struct Transfer {
  uint8_t bytes[sizeof(QpInfo) + 1] = {};
  size_t size = 0, done = 0;
  bool complete() const { return done == size; }
  // Moves what the socket takes now of what is left.
  Status send(int fd) {
    return complete() ? Status::ok() : net::sendSome(fd, bytes + done, size - done, &done);
  }
  Status recv(int fd) {
    return complete() ? Status::ok() : net::recvSome(fd, bytes + done, size - done, &done);
  }
};

class IbConnect {
 public:
  IbConnect(uint64_t connectorId, const net::SocketAddress& address, const VerbsApi& api, const IbPort& port,
            const transport::Options& options);

  // *comm once the connection is up; an error ends the attempt.
  Status step(std::unique_ptr<IbSendComm>* comm);
  const net::SocketAddress& address() const { return address_; }

 private:
  enum class State { kIdle, kConnecting, kHandshake, kExchange, kReady, kDone };
  Status startOrRetry();

  uint64_t connectorId_;
  net::SocketAddress address_;
  const VerbsApi& api_;
  IbPort port_;
  transport::Options options_;
  std::chrono::steady_clock::time_point refusedUntil_, retryAt_{};
  int backoffMs_ = 1;
  State state_ = State::kIdle;
  net::Fd fd_;
  std::unique_ptr<net::ConnectorHandshake> handshake_;
  std::unique_ptr<QueuePair> qp_;
  Transfer out_, in_;  // our QpInfo; the listener's QpInfo and ready byte
};

class IbAccept {
 public:
  IbAccept(net::Fd fd, std::string peer, const VerbsApi& api, const IbPort& port,
           const transport::Options& options);

  // *comm once the connection is up (then connectorId() is valid); an error
  // means the connection is dropped.
  Status step(std::unique_ptr<IbRecvComm>* comm);
  bool expired() const { return std::chrono::steady_clock::now() > deadline_; }
  uint64_t connectorId() const { return handshake_.connectorId(); }
  const std::string& peer() const { return peer_; }
  int fd() const { return fd_.get(); }

 private:
  enum class State { kHandshake, kReadInfo, kWriteInfo, kReadReady };

  net::Fd fd_;
  std::string peer_;
  const VerbsApi& api_;
  IbPort port_;
  std::chrono::steady_clock::time_point deadline_;
  net::AcceptorHandshake handshake_;
  State state_ = State::kHandshake;
  std::unique_ptr<QueuePair> qp_;
  Transfer in_, out_;
};

}  // namespace braid::ibverbs

// PendingConnect: one Transport::connect() in progress, as a non-blocking state
// machine, so that a thread may connect and accept at the same time (a ring of
// ranks that each connect to the next and accept from the previous must not
// wait on each other).
//
// Each of the nSocks sockets goes: connect (retrying a refused connection
// until handshakeTimeoutMs: the listener may be restarting) -> secret handshake
// -> ConnHeader. How long the peer takes to call accept() is not bounded here:
// the caller, which keeps calling connect(), owns that deadline.
#pragma once

#include <memory>
#include <vector>

#include "base/deadline.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"
#include "transports/tcp/frame.h"
#include "transports/tcp/poll_set.h"
#include "transports/transport.h"

namespace braid::tcp {

class PendingConnect final : public Pollable {
 public:
  PendingConnect(uint64_t connectorId, const net::SocketAddress& address, const transport::Options& options,
                 std::shared_ptr<PollSet> pollSet);
  ~PendingConnect() override;

  // Advances every socket; *finished once all are connected, authenticated
  // and announced (then *socks holds them in index order).
  Status step(bool* finished, std::vector<net::Fd>* socks);
  bool addPollFds(std::vector<pollfd>* fds) const override;
  const net::SocketAddress& address() const { return address_; }

 private:
  enum class State { kIdle, kConnecting, kHandshake, kHeader, kDone };
  struct Sock {
    net::Fd fd;
    State state = State::kIdle;
    std::unique_ptr<net::ConnectorHandshake> handshake;
    uint8_t header[sizeof(ConnHeader)] = {};
    size_t sent = 0;
    Clock::time_point retryAt{};
    int backoffMs = 1;
  };
  Status stepSock(Sock& s, int index);
  Status retry(Sock& s);

  uint64_t connectorId_;
  net::SocketAddress address_;
  transport::Secret secret_;
  int trafficClass_;  // Options::trafficClass
  Deadline refusedDeadline_;
  uint64_t connId_ = 0;
  std::vector<Sock> socks_;
  std::shared_ptr<PollSet> pollSet_;
};

}  // namespace braid::tcp

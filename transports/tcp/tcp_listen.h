// TcpListenComm: the accepting end of a TCP transport endpoint.
//
// accept() never blocks. It takes new sockets from the kernel, drives the
// AcceptorHandshake of every pending socket concurrently (so one stalled or
// hostile stranger never delays a genuine peer), reads each authenticated
// socket's ConnHeader and groups the sockets of one connection. A connection
// is handed out once all its sockets arrived. Strangers (failed handshake,
// garbage, silence past Options::handshakeTimeoutMs) are dropped with a warning.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "transports/accept_queue.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"
#include "transports/tcp/frame.h"
#include "transports/tcp/poll_set.h"
#include "transports/tcp/tcp_comm.h"
#include "transports/transport.h"

namespace braid::tcp {

class TcpListenComm final : public transport::ListenComm, public Pollable {
 public:
  TcpListenComm(net::Fd fd, const net::SocketAddress& address, const transport::Options& options,
                std::shared_ptr<PollSet> pollSet);
  ~TcpListenComm() override;

  Status accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId);
  bool addPollFds(std::vector<pollfd>* fds) const override;
  const net::SocketAddress& address() const { return address_; }

 private:
  struct Pending {
    net::Fd fd;
    std::string peer;
    net::AcceptorHandshake handshake;
    bool authenticated = false;
    uint8_t header[sizeof(ConnHeader)] = {};
    size_t have = 0;
    Clock::time_point start;
  };
  struct Group {  // the sockets of one connection that arrived so far
    uint64_t connectorId = 0, connId = 0;
    std::vector<net::Fd> socks;
    int arrived = 0;
    std::string peer;
    Clock::time_point start;
  };

  Status acceptNew();
  // Advances one pending socket; false when it is finished with (grouped or
  // dropped), true while it still waits for bytes.
  bool drive(Pending& p);
  bool place(Pending& p, const ConnHeader& h);
  void dropStale();
  bool expired(Clock::time_point start) const;

  net::Fd fd_;
  net::SocketAddress address_;
  transport::Secret secret_;
  int handshakeTimeoutMs_;
  int trafficClass_;  // Options::trafficClass
  std::vector<Pending> pending_;
  std::vector<Group> groups_;
  transport::AcceptQueue ready_;
  std::shared_ptr<PollSet> pollSet_;
};

}  // namespace braid::tcp

// IbListenComm: the accepting end of an ibverbs transport endpoint: a TCP
// listener for side channels. accept() never blocks: it takes new sockets and
// drives every pending setup at once, so one stalled or hostile stranger never
// delays a genuine peer. Strangers (failed proof, garbage, silence past the
// handshake timeout) are dropped with a warning.
#pragma once

#include <memory>
#include <vector>

#include "transports/accept_queue.h"
#include "transports/ibverbs/ib_setup.h"

namespace braid::ibverbs {

class IbListenComm final : public transport::ListenComm {
 public:
  IbListenComm(net::Fd fd, const net::SocketAddress& address, const VerbsApi& api, const IbPort& port,
               const transport::Options& options)
      : fd_(std::move(fd)), address_(address), api_(api), port_(port), options_(options) {}

  Status accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId);

 private:
  Status acceptNew();
  // Advances one pending setup; false once it is finished with (ready or dropped).
  bool drive(IbAccept& a);

  net::Fd fd_;
  net::SocketAddress address_;
  const VerbsApi& api_;
  IbPort port_;
  transport::Options options_;
  std::vector<std::unique_ptr<IbAccept>> pending_;
  transport::AcceptQueue ready_;
};

}  // namespace braid::ibverbs

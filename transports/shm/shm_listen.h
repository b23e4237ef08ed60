// ShmListenComm: the accepting end of an shm endpoint.
//
// accept() never blocks. It takes new sockets from the kernel and reads each
// one's Hello when it arrives (so one silent stranger never delays a genuine
// peer), checks the MAC before touching the descriptors it carries, maps the
// ring and the peer's doorbell, probes cross-memory attach and answers. A
// connection is handed out once answered. Strangers (wrong MAC, garbage,
// silence past Options::handshakeTimeoutMs) are dropped with a warning.
#pragma once

#include <sys/types.h>

#include <memory>
#include <vector>

#include "base/deadline.h"
#include "transports/accept_queue.h"
#include "transports/shm/handshake.h"
#include "transports/shm/local_end.h"
#include "transports/shm/shm_comm.h"

namespace braid::shm {

class ShmListenComm final : public transport::ListenComm, public SetupEndpoint {
 public:
  ShmListenComm(net::Fd fd, const ListenerName& name, std::shared_ptr<LocalEnd> local);
  ~ShmListenComm() override;

  Status accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId);
  bool addPollFds(std::vector<pollfd>* fds) const override;

 private:
  struct Pending {
    net::Fd fd;
    pid_t pid = 0;
    Clock::time_point start;
  };
  Status acceptNew();
  // Advances one pending socket; false when finished with it (answered or dropped).
  bool drive(Pending& p);
  Status answer(Pending& p, const Hello& hello, std::vector<net::Fd>& fds);
  bool probeCma(pid_t pid, const Hello& hello) const;

  net::Fd fd_;
  ListenerName name_;
  std::shared_ptr<LocalEnd> local_;
  std::vector<Pending> pending_;
  transport::AcceptQueue ready_;
};

}  // namespace braid::shm

// PendingConnect: one Transport::connect() in progress, as a non-blocking state
// machine (a thread may connect and accept at the same time).
//
// kConnect: connect to the listener's abstract socket, retrying a refused or
// full listener until handshakeTimeoutMs; then create the ring segment and
// send the Hello. kReply: wait for the acceptor's Reply (how long the peer
// takes to call accept() is the caller's deadline, as with tcp), check its
// MAC, map its doorbell. The probe word the acceptor reads to test
// cross-memory attach lives in this object, which stays put (heap) until then.
#pragma once

#include <sys/types.h>

#include <memory>

#include "base/deadline.h"
#include "transports/shm/handshake.h"
#include "transports/shm/local_end.h"
#include "transports/shm/shm_comm.h"

namespace braid::shm {

class PendingConnect final : public SetupEndpoint {
 public:
  PendingConnect(uint64_t connectorId, const HandleInfo& info, std::shared_ptr<LocalEnd> local);
  ~PendingConnect() override;

  // *out stays null while in progress.
  Status step(std::unique_ptr<ShmSendComm>* out);
  bool addPollFds(std::vector<pollfd>* fds) const override;

 private:
  enum class State { kConnect, kReply };
  Status tryConnect();
  Status sendHello();
  Status readReply(std::unique_ptr<ShmSendComm>* out);
  // Whether this process may write into the acceptor's (the Reply's probe).
  bool probePush(const Reply& reply) const;
  std::string listener() const;

  uint64_t connectorId_;
  HandleInfo info_;
  std::shared_ptr<LocalEnd> local_;
  State state_ = State::kConnect;
  Deadline refusedDeadline_;
  Clock::time_point retryAt_{};
  int backoffMs_ = 1;
  net::Fd sock_;
  pid_t peerPid_ = 0;
  Mapping ring_;
  uint64_t nonce_ = 0;
  volatile uint64_t probe_ = 0;  // read by the acceptor with process_vm_readv
};

}  // namespace braid::shm

// ShmTransport: the built-in transport between processes on one host,
// registered as "shm".
//
// One device. A connection is a ring in shared memory (ring.h) from the
// SendComm to the RecvComm; messages of at least ShmConfig::cmaThreshold bytes
// are pulled by the receiver straight from the sender's buffer with
// process_vm_readv (single copy) when the connection allows it, else they
// stream through the ring. Setup is in handshake.h; every connection proves the
// secret. Waiting spins briefly, then sleeps on this transport's doorbell
// (doorbell.h), which every peer rings after making progress possible for us.
//
// Lifetime: comms and listeners may outlive the transport or die first, in any
// order; a Request is valid until test() reports it done or its comm is destroyed.
#pragma once

#include <memory>
#include <vector>

#include "transports/connect_attempts.h"
#include "transports/shm/config.h"
#include "transports/shm/local_end.h"
#include "transports/shm/shm_connect.h"
#include "transports/transport.h"

namespace braid::shm {

class ShmTransport final : public transport::Transport {
 public:
  static Status create(const transport::Options& options, const ShmConfig& config,
                       std::unique_ptr<transport::Transport>* out);

  const char* name() const override { return "shm"; }
  transport::Capabilities capabilities() const override { return {}; }
  int deviceCount() const override { return 1; }
  Status deviceProperties(int dev, transport::DeviceProperties* props) const override;

  Status listen(int dev, transport::Handle* handle, std::unique_ptr<transport::ListenComm>* listenComm) override;
  Status connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                 std::unique_ptr<transport::SendComm>* sendComm) override;
  Status accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                uint64_t* connectorId) override;
  Status test(transport::Request* req, bool* done, size_t* size) override;
  // Data pending: spin ShmConfig::spinUs, then sleep on the doorbell (at most
  // 1 ms at a time while a listener or connect also waits, since their sockets
  // cannot be waited on together with the futex). Only setup pending: poll its
  // sockets. Nothing pending: returns at once.
  Status wait(int timeoutMs) override;
  // Told to the peers through this transport's doorbell page (pendingSends'
  // line), which a sender reads before it pushes; a sender asleep with a
  // receive offered to it is woken.
  void noteLocalWork(bool busy) override {
    local_->page()->busy.store(busy ? 1 : 0, std::memory_order_seq_cst);
    if (busy) local_->waitSet->startingLocalWork();
  }

 private:
  explicit ShmTransport(std::shared_ptr<LocalEnd> local) : local_(std::move(local)) {}
  Status checkDevice(int dev) const;

  std::shared_ptr<LocalEnd> local_;
  transport::ConnectAttempts<PendingConnect> connects_;
  std::vector<pollfd> pollFds_;  // reused by wait()
};

}  // namespace braid::shm

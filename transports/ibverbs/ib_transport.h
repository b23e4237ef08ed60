// The ibverbs transport: reliable-connected queue pairs on InfiniBand or RoCE
// ports, set up over a TCP side channel that proves the secret both ways
// (ib_wire.h has the protocol). Registered as "ibverbs" when rdma-core's
// headers were found at build time; libibverbs itself is opened at run time
// (verbs_api.h), and a host without an active RDMA port gets NotSupported
// saying so.
//
// Devices are the active ports (BRAID_IB_HCA selects). The side channel
// listens on the interface BRAID_SOCKET_IFNAME selects, as tcp does.
#pragma once

#include <memory>
#include <vector>

#include "transports/connect_attempts.h"
#include "transports/ibverbs/ib_devices.h"
#include "transports/ibverbs/ib_setup.h"
#include "transports/ibverbs/ib_wire.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::ibverbs {

class IbTransport final : public transport::Transport {
 public:
  static Status create(const transport::Options& options, std::unique_ptr<transport::Transport>* out);

  const char* name() const override { return "ibverbs"; }
  transport::Capabilities capabilities() const override {
    transport::Capabilities c;
    c.maxMessageBytes = kMaxMessageBytes;  // the immediate carries the size
    c.registersMemory = true;              // an IbMemory (ib_memory.h)
    return c;
  }
  int deviceCount() const override { return static_cast<int>(ports_.size()); }
  Status deviceProperties(int dev, transport::DeviceProperties* props) const override;
  Status listen(int dev, transport::Handle* handle,
                std::unique_ptr<transport::ListenComm>* listenComm) override;
  Status connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                 std::unique_ptr<transport::SendComm>* sendComm) override;
  Status accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                uint64_t* connectorId) override;
  // Thread-safe (transport.h): libibverbs' registration calls are, and
  // these touch nothing else of the transport's.
  Status regMr(void* data, size_t size, void** mhandle) override;
  Status deregMr(void* mhandle) override;
  Status test(transport::Request* req, bool* done, size_t* size) override;
  // Completions are polled, not waited for: returns at once (transport.h
  // allows a spurious return), yielding the core.
  Status wait(int timeoutMs) override;

 private:
  IbTransport(const transport::Options& options, const VerbsApi& api, std::vector<IbPort> ports,
              net::Interface side)
      : options_(options), api_(api), ports_(std::move(ports)), side_(std::move(side)) {}
  Status checkDevice(int dev) const;

  transport::Options options_;
  const VerbsApi& api_;
  std::vector<IbPort> ports_;
  net::Interface side_;
  transport::ConnectAttempts<IbConnect> connects_;
};

}  // namespace braid::ibverbs

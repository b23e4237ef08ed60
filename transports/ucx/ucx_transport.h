// UcxTransport: braid's transport over UCX (UCP tagged messages), registered
// as "ucx". UCX picks the wire itself (InfiniBand / RoCE verbs, shared memory,
// TCP ...; UCX_TLS and UCX_NET_DEVICES steer it), so one transport reaches
// fabrics braid has no native code for.
//
// Devices are the interfaces BRAID_SOCKET_IFNAME selects, as for tcp: a
// device is the address a listener is reached at (UCX's connection manager
// speaks IP), not the NIC the data takes. Every connection proves the
// communicator's secret before it counts (ucx_wire.h).
//
// UCX itself is opened with dlopen at the first create (ucp_api.h): without
// it, create fails with NotSupported and the reason, and nothing else
// changes.
#pragma once

#include <memory>
#include <vector>

#include "transports/connect_attempts.h"
#include "transports/net/socket.h"
#include "transports/transport.h"
#include "transports/ucx/ucx_connect.h"
#include "transports/ucx/ucx_listen.h"

namespace braid::ucx {

class UcxTransport final : public transport::Transport {
 public:
  static Status create(const transport::Options& options, std::unique_ptr<transport::Transport>* out);
  ~UcxTransport() override;

  const char* name() const override { return "ucx"; }
  transport::Capabilities capabilities() const override { return {}; }
  int deviceCount() const override { return static_cast<int>(devices_.size()); }
  Status deviceProperties(int dev, transport::DeviceProperties* props) const override;

  Status listen(int dev, transport::Handle* handle,
                std::unique_ptr<transport::ListenComm>* listenComm) override;
  Status connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                 std::unique_ptr<transport::SendComm>* sendComm) override;
  Status accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                uint64_t* connectorId) override;
  Status test(transport::Request* req, bool* done, size_t* size) override;
  Status wait(int timeoutMs) override;
  void dropUndelivered() override { worker_->dropUndelivered(); }

 private:
  UcxTransport(const transport::Options& options, std::vector<net::Interface> devices,
               std::shared_ptr<UcxWorker> worker)
      : options_(options), devices_(std::move(devices)), worker_(std::move(worker)) {}
  Status checkDevice(int dev) const;

  transport::Options options_;
  std::vector<net::Interface> devices_;
  std::shared_ptr<UcxWorker> worker_;
  std::shared_ptr<KeyRegistry> keys_ = std::make_shared<KeyRegistry>();
  transport::ConnectAttempts<UcxConnect> connects_;
};

}  // namespace braid::ucx

// TcpTransport: the built-in transport over TCP sockets, registered as "tcp".
//
// Devices are the interfaces chosen by Options::ifname (BRAID_SOCKET_IFNAME
// syntax) and BRAID_SOCKET_FAMILY. A connection is Options::nSocks sockets;
// messages of kStripeThreshold bytes and more are striped over all of them
// (wire format in frame.h). Every socket proves the secret before it counts.
//
// Lifetime: comms may outlive the transport or die first, in any order; a
// Request is valid until test() reports it done or its comm is destroyed.
#pragma once

#include <memory>
#include <vector>

#include "transports/connect_attempts.h"
#include "transports/net/socket.h"
#include "transports/tcp/poll_set.h"
#include "transports/tcp/tcp_connect.h"
#include "transports/transport.h"

namespace braid::tcp {

class TcpTransport final : public transport::Transport {
 public:
  static Status create(const transport::Options& options, std::unique_ptr<transport::Transport>* out);

  const char* name() const override { return "tcp"; }
  transport::Capabilities capabilities() const override { return {}; }
  int deviceCount() const override { return static_cast<int>(devices_.size()); }
  Status deviceProperties(int dev, transport::DeviceProperties* props) const override;

  Status listen(int dev, transport::Handle* handle, std::unique_ptr<transport::ListenComm>* listenComm) override;
  Status connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                 std::unique_ptr<transport::SendComm>* sendComm) override;
  Status accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                uint64_t* connectorId) override;
  Status test(transport::Request* req, bool* done, size_t* size) override;
  Status wait(int timeoutMs) override;

 private:
  TcpTransport(const transport::Options& options, std::vector<net::Interface> devices);
  Status checkDevice(int dev) const;
  bool isLocal(const net::SocketAddress& address) const;

  transport::Options options_;
  std::vector<net::Interface> devices_;
  std::shared_ptr<PollSet> pollSet_ = std::make_shared<PollSet>();
  transport::ConnectAttempts<PendingConnect> connects_;
  std::vector<pollfd> pollFds_;  // reused by wait()
};

}  // namespace braid::tcp

// The connecting side of the UCX transport: an endpoint to the listener's
// address, the secret handshake over its stream, then the acceptor's reply
// with the connection's key (ucx_wire.h). Advanced by Transport::connect,
// which the caller repeats until the SendComm appears; the caller's own
// deadline bounds the whole (a listener may start accepting late).
#pragma once

#include <memory>

#include "transports/net/auth.h"
#include "transports/transport.h"
#include "transports/ucx/ucx_stream_channel.h"

namespace braid::ucx {

class UcxConnect {
 public:
  UcxConnect(uint64_t connectorId, const transport::Secret& secret)
      : handshake_(secret, net::Purpose::kUcxData, connectorId) {}
  ~UcxConnect();
  Status start(std::shared_ptr<UcxWorker> worker, const net::SocketAddress& address);
  // Ok with *sendComm still null while the setup goes on.
  Status step(std::unique_ptr<transport::SendComm>* sendComm);

 private:
  StreamChannel channel_;  // before the endpoint: it must outlive the close
  std::unique_ptr<Endpoint> endpoint_;
  net::ConnectorHandshake handshake_;
  bool authenticated_ = false;
  uint8_t accepted_[8] = {};
  size_t received_ = 0;
};

}  // namespace braid::ucx

// A UCP endpoint with its failure state and an orderly close. Endpoints are
// made from a listener's connection request (the accepting side) or from a
// listener's address (the connecting side); peer failure handling is on, so
// a dead peer turns into errors instead of silence.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "transports/net/socket.h"
#include "transports/ucx/ucx_worker.h"

namespace braid::ucx {

class Endpoint {
 public:
  static Status connect(std::shared_ptr<UcxWorker> worker, const net::SocketAddress& address,
                        std::unique_ptr<Endpoint>* out);
  static Status accept(std::shared_ptr<UcxWorker> worker, ucp_conn_request_h request, std::string peer,
                       std::unique_ptr<Endpoint>* out);
  // Hands the endpoint to the worker to close (UcxWorker::retire): flushed
  // first, unless it failed or was closed forcibly already.
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  ucp_ep_h ep() const { return ep_; }
  UcxWorker& worker() const { return *worker_; }
  const std::shared_ptr<UcxWorker>& sharedWorker() const { return worker_; }
  const std::string& peer() const { return peer_; }
  // Ok while the peer is reachable; afterwards what UCX reported, as a
  // RemoteError naming the peer.
  Status failure() const;
  // Closes without flushing, and ends the operations still pending on it
  // (with an error) before returning: for peers that failed the handshake,
  // and for receiving ends, which have sent nothing that must arrive.
  void closeForcibly();

 private:
  Endpoint(std::shared_ptr<UcxWorker> worker, std::string peer);
  static void onError(void* arg, ucp_ep_h ep, ucs_status_t status);
  Status create(ucp_ep_params_t* params);
  void close(bool flush);

  std::shared_ptr<UcxWorker> worker_;
  std::string peer_;
  ucp_ep_h ep_ = nullptr;
  EndpointHealth* health_ = new EndpointHealth;
};

}  // namespace braid::ucx

// The accepting side of the UCX transport: a UCP listener on a socket
// address, and the connections that are proving the secret.
//
// A connection request becomes an endpoint at once (UCP needs one to talk),
// but counts only after the handshake: a stranger, a peer with the wrong
// secret or one that stays silent past the handshake deadline is closed and
// logged, and never delays the others.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "base/deadline.h"
#include "transports/net/auth.h"
#include "transports/ucx/ucx_stream_channel.h"
#include "transports/ucx/ucx_worker.h"

namespace braid::ucx {

// Keys of the worker's live receiving connections (ucx_wire.h).
class KeyRegistry {
 public:
  Status allocate(uint32_t* key);
  void release(uint32_t key);

 private:
  std::vector<uint32_t> live_;
};

class UcxListenComm final : public transport::ListenComm {
 public:
  static Status create(std::shared_ptr<UcxWorker> worker, const net::SocketAddress& bind,
                       const transport::Options& options, std::shared_ptr<KeyRegistry> keys,
                       std::unique_ptr<UcxListenComm>* out, net::SocketAddress* bound);
  ~UcxListenComm() override;

  // Transport::accept: the next connection that proved the secret, if any.
  Status accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId);

 private:
  struct Pending {
    StreamChannel channel;  // before the endpoint: it must outlive the close
    std::unique_ptr<Endpoint> endpoint;
    net::AcceptorHandshake handshake;
    Deadline deadline;
    uint32_t key = 0;  // once the handshake succeeded
    uint8_t reply[8] = {};
    size_t replied = 0;
    Pending(const transport::Secret& secret, int timeoutMs)
        : handshake(secret, net::Purpose::kUcxData), deadline(timeoutMs) {}
  };
  UcxListenComm(std::shared_ptr<UcxWorker> worker, const transport::Options& options,
                std::shared_ptr<KeyRegistry> keys)
      : worker_(std::move(worker)), options_(options), keys_(std::move(keys)) {}
  static void onConnection(ucp_conn_request_h request, void* arg);
  std::string clientOf(ucp_conn_request_h request) const;
  // Advances one pending connection; *finished once it may be handed out.
  Status step(Pending& p, bool* finished);

  std::shared_ptr<UcxWorker> worker_;
  transport::Options options_;
  std::shared_ptr<KeyRegistry> keys_;
  ucp_listener_h listener_ = nullptr;
  std::deque<ucp_conn_request_h> arrived_;  // filled by UCX during progress
  std::vector<std::unique_ptr<Pending>> pending_;
};

}  // namespace braid::ucx

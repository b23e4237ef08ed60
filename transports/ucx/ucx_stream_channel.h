// The secret handshake (net/auth.h) over an endpoint's UCP byte stream. Data
// never travels this way: only the handshake and the acceptor's reply that
// names the connection's tag key (ucx_wire.h).
//
// Each direction has at most one operation in flight, on bytes the channel
// holds itself. The channel must outlive its endpoint's close, which ends
// whatever is still pending (the owner declares the channel first).
#pragma once

#include <cstddef>
#include <cstdint>

#include "transports/net/auth.h"
#include "transports/ucx/ucx_endpoint.h"

namespace braid::ucx {

class StreamChannel final : public net::HandshakeChannel {
 public:
  ~StreamChannel();
  // Binds the channel to an endpoint (once, before the first send or recv).
  void attach(Endpoint* endpoint) {
    endpoint_ = endpoint;
    worker_ = endpoint->sharedWorker();
  }
  Status send(const uint8_t* buf, size_t want, size_t* have) override;
  Status recv(uint8_t* buf, size_t want, size_t* have) override;

 private:
  static constexpr size_t kMaxBytes = 32;  // the longest handshake message
  struct Direction {
    void* request = nullptr;
    size_t bytes = 0;  // of the operation in flight
    uint8_t data[kMaxBytes] = {};
  };
  // Ends `d`'s operation if UCX finished it; *finished tells.
  Status settle(Direction& d, const char* what, bool* finished);

  Endpoint* endpoint_ = nullptr;
  std::shared_ptr<UcxWorker> worker_;  // outlives the endpoint, for the destructor
  Direction out_, in_;
};

}  // namespace braid::ucx

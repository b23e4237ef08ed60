#include "transports/ucx/ucx_connect.h"

#include <cstring>

#include "transports/ucx/ucx_comm.h"
#include "transports/ucx/ucx_wire.h"

namespace braid::ucx {

UcxConnect::~UcxConnect() {
  if (endpoint_) endpoint_->closeForcibly();  // given up half way: nothing of ours to flush
}

Status UcxConnect::start(std::shared_ptr<UcxWorker> worker, const net::SocketAddress& address) {
  BRAID_RETURN_IF_ERROR(Endpoint::connect(std::move(worker), address, &endpoint_));
  channel_.attach(endpoint_.get());
  return Status::ok();
}

Status UcxConnect::step(std::unique_ptr<transport::SendComm>* sendComm) {
  sendComm->reset();
  if (!authenticated_) {
    BRAID_RETURN_IF_ERROR(
        handshake_.step(channel_, &authenticated_).prefix("ucx connect to " + endpoint_->peer()));
    if (!authenticated_) return Status::ok();
  }
  BRAID_RETURN_IF_ERROR(
      channel_.recv(accepted_, kAcceptedBytes, &received_).prefix("ucx connect to " + endpoint_->peer()));
  if (received_ < kAcceptedBytes) return Status::ok();
  uint32_t magic = 0, key = 0;
  std::memcpy(&magic, accepted_, 4);
  std::memcpy(&key, accepted_ + 4, 4);
  if (magic != kMagic || key == 0)
    return remoteError("ucx connect to " + endpoint_->peer() + ": the acceptor's reply is malformed");
  *sendComm = std::make_unique<UcxSendComm>(std::move(endpoint_), key);
  return Status::ok();
}

}  // namespace braid::ucx

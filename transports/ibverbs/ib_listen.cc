#include "transports/ibverbs/ib_listen.h"

#include "base/log.h"

namespace braid::ibverbs {
namespace {
constexpr int kMaxAcceptsPerCall = 64;  // bounds the work of one accept() under a flood
constexpr size_t kMaxPending = 1024;    // beyond this, the oldest stranger goes first
}  // namespace

Status IbListenComm::acceptNew() {
  for (int i = 0; i < kMaxAcceptsPerCall; ++i) {
    net::Fd conn;
    net::SocketAddress peer;
    BRAID_RETURN_IF_ERROR(
        net::acceptOne(fd_.get(), &conn, &peer).prefix("ibverbs listener " + address_.toString()));
    if (!conn.valid()) return Status::ok();
    if (pending_.size() >= kMaxPending) {
      BRAID_WARN("ibverbs listener %s: too many unauthenticated connections; dropping the one from %s",
                 address_.toString().c_str(), pending_.front()->peer().c_str());
      pending_.erase(pending_.begin());
    }
    pending_.push_back(std::make_unique<IbAccept>(std::move(conn), peer.toString(), api_, port_, options_));
  }
  return Status::ok();
}

bool IbListenComm::drive(IbAccept& a) {
  std::unique_ptr<IbRecvComm> comm;
  Status st = a.step(&comm);
  if (!st.isOk()) {
    BRAID_WARN("ibverbs listener %s: dropping connection from %s: %s", address_.toString().c_str(),
               a.peer().c_str(), st.message().c_str());
    return false;
  }
  if (comm) {
    ready_.push(std::move(comm), a.connectorId());
    return false;
  }
  if (a.expired()) {
    BRAID_WARN("ibverbs listener %s: dropping connection from %s: no complete setup within %d ms",
               address_.toString().c_str(), a.peer().c_str(), options_.handshakeTimeoutMs);
    return false;
  }
  return true;
}

Status IbListenComm::accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId) {
  recvComm->reset();
  if (ready_.empty()) {
    BRAID_RETURN_IF_ERROR(acceptNew());
    transport::driveEach(pending_, [&](std::unique_ptr<IbAccept>& a) { return drive(*a); });
  }
  ready_.pop(recvComm, connectorId);
  return Status::ok();
}

}  // namespace braid::ibverbs

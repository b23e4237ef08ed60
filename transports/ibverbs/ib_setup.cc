#include "transports/ibverbs/ib_setup.h"

#include <poll.h>

#include <algorithm>
#include <cstring>

namespace braid::ibverbs {
namespace {

constexpr uint8_t kReady = 1;

void load(Transfer* t, const void* data, size_t size) {
  std::memcpy(t->bytes, data, size);
  t->size = size;
  t->done = 0;
}

void expect(Transfer* t, size_t size) {
  t->size = size;
  t->done = 0;
}

Status parseInfo(const uint8_t* bytes, const std::string& peer, QpInfo* info) {
  std::memcpy(info, bytes, sizeof(*info));
  if (info->magic != kQpInfoMagic || info->version != kQpInfoVersion)
    return remoteError("ibverbs: peer " + peer + " sent no queue pair description this version understands");
  return Status::ok();
}

}  // namespace

IbConnect::IbConnect(uint64_t connectorId, const net::SocketAddress& address, const VerbsApi& api,
                     const IbPort& port, const transport::Options& options)
    : connectorId_(connectorId),
      address_(address),
      api_(api),
      port_(port),
      options_(options),
      refusedUntil_(std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(options.handshakeTimeoutMs)) {}

// A refused connection is tried again until the handshake timeout: the
// listener may not be up yet.
Status IbConnect::startOrRetry() {
  const auto now = std::chrono::steady_clock::now();
  fd_.reset();
  if (now > refusedUntil_)
    return remoteError("ibverbs connect to " + address_.toString() +
                       ": connection refused (is the peer listening?)");
  state_ = State::kIdle;
  retryAt_ = now + std::chrono::milliseconds(backoffMs_);
  backoffMs_ = std::min(2 * backoffMs_, 100);
  return Status::ok();
}

Status IbConnect::step(std::unique_ptr<IbSendComm>* comm) {
  const std::string where = "ibverbs connect to " + address_.toString();
  if (state_ == State::kIdle) {
    if (std::chrono::steady_clock::now() < retryAt_) return Status::ok();
    int err = 0;
    BRAID_RETURN_IF_ERROR(net::startConnect(address_, &fd_, &err));
    if (err == ECONNREFUSED) return startOrRetry();
    if (err != 0 && err != EINPROGRESS) return systemError(where, err);
    state_ = State::kConnecting;
  }
  if (state_ == State::kConnecting) {
    pollfd p{fd_.get(), POLLOUT, 0};
    if (poll(&p, 1, 0) == 0) return Status::ok();
    const int err = net::connectResult(fd_.get());
    if (err == ECONNREFUSED) return startOrRetry();
    if (err != 0) return systemError(where, err);
    if (!qp_) BRAID_RETURN_IF_ERROR(QueuePair::create(api_, port_, &qp_));
    const QpInfo mine = qp_->localInfo();
    load(&out_, &mine, sizeof(mine));
    expect(&in_, sizeof(QpInfo) + 1);
    handshake_ =
        std::make_unique<net::ConnectorHandshake>(options_.secret, net::Purpose::kIbData, connectorId_);
    state_ = State::kHandshake;
  }
  if (state_ == State::kHandshake) {
    bool finished = false;
    BRAID_RETURN_IF_ERROR(handshake_->step(fd_.get(), &finished).prefix(where));
    if (!finished) return Status::ok();
    state_ = State::kExchange;
  }
  if (state_ == State::kExchange) {
    BRAID_RETURN_IF_ERROR(out_.send(fd_.get()).prefix(where));
    BRAID_RETURN_IF_ERROR(in_.recv(fd_.get()).prefix(where));
    if (!out_.complete() || !in_.complete()) return Status::ok();
    QpInfo theirs;
    BRAID_RETURN_IF_ERROR(parseInfo(in_.bytes, address_.toString(), &theirs));
    if (in_.bytes[sizeof(QpInfo)] != kReady) return remoteError(where + ": the listener was not ready");
    BRAID_RETURN_IF_ERROR(qp_->connect(theirs));
    load(&out_, &kReady, 1);
    state_ = State::kReady;
  }
  if (state_ == State::kReady) {
    BRAID_RETURN_IF_ERROR(out_.send(fd_.get()).prefix(where));
    if (!out_.complete()) return Status::ok();
    state_ = State::kDone;
    *comm = std::make_unique<IbSendComm>(std::move(qp_), std::move(fd_), address_.toString());
  }
  return Status::ok();
}

IbAccept::IbAccept(net::Fd fd, std::string peer, const VerbsApi& api, const IbPort& port,
                   const transport::Options& options)
    : fd_(std::move(fd)),
      peer_(std::move(peer)),
      api_(api),
      port_(port),
      deadline_(std::chrono::steady_clock::now() + std::chrono::milliseconds(options.handshakeTimeoutMs)),
      handshake_(options.secret, net::Purpose::kIbData) {}

Status IbAccept::step(std::unique_ptr<IbRecvComm>* comm) {
  if (state_ == State::kHandshake) {
    bool finished = false;
    BRAID_RETURN_IF_ERROR(handshake_.step(fd_.get(), &finished));
    if (!finished) return Status::ok();
    expect(&in_, sizeof(QpInfo));
    state_ = State::kReadInfo;
  }
  if (state_ == State::kReadInfo) {
    BRAID_RETURN_IF_ERROR(in_.recv(fd_.get()));
    if (!in_.complete()) return Status::ok();
    QpInfo theirs;
    BRAID_RETURN_IF_ERROR(parseInfo(in_.bytes, peer_, &theirs));
    BRAID_RETURN_IF_ERROR(QueuePair::create(api_, port_, &qp_));
    BRAID_RETURN_IF_ERROR(qp_->connect(theirs));
    const QpInfo mine = qp_->localInfo();
    load(&out_, &mine, sizeof(mine));
    out_.bytes[sizeof(QpInfo)] = kReady;
    out_.size = sizeof(QpInfo) + 1;
    state_ = State::kWriteInfo;
  }
  if (state_ == State::kWriteInfo) {
    BRAID_RETURN_IF_ERROR(out_.send(fd_.get()));
    if (!out_.complete()) return Status::ok();
    expect(&in_, 1);
    state_ = State::kReadReady;
  }
  if (state_ == State::kReadReady) {
    BRAID_RETURN_IF_ERROR(in_.recv(fd_.get()));
    if (!in_.complete()) return Status::ok();
    if (in_.bytes[0] != kReady) return remoteError("the connector was not ready");
    *comm = std::make_unique<IbRecvComm>(std::move(qp_), std::move(fd_), peer_);
  }
  return Status::ok();
}

}  // namespace braid::ibverbs

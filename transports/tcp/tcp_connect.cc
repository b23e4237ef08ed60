#include "transports/tcp/tcp_connect.h"

#include <algorithm>
#include <cstring>

#include "transports/tcp/socket_options.h"

namespace braid::tcp {

PendingConnect::PendingConnect(uint64_t connectorId, const net::SocketAddress& address,
                               const transport::Options& options, std::shared_ptr<PollSet> pollSet)
    : connectorId_(connectorId),
      address_(address),
      secret_(options.secret),
      trafficClass_(options.trafficClass),
      refusedDeadline_(options.handshakeTimeoutMs),
      socks_(options.nSocks),
      pollSet_(std::move(pollSet)) {
  pollSet_->add(this);
}

PendingConnect::~PendingConnect() { pollSet_->remove(this); }

Status PendingConnect::retry(Sock& s) {
  s.fd.reset();
  if (refusedDeadline_.expired())
    return remoteError("tcp connect to " + address_.toString() + ": connection refused (is the peer still listening?)");
  s.state = State::kIdle;
  s.retryAt = Clock::now() + std::chrono::milliseconds(s.backoffMs);
  s.backoffMs = std::min(2 * s.backoffMs, 100);
  return Status::ok();
}

Status PendingConnect::stepSock(Sock& s, int index) {
  if (s.state == State::kIdle) {
    if (Clock::now() < s.retryAt) return Status::ok();
    int err = 0;
    BRAID_RETURN_IF_ERROR(net::startConnect(address_, &s.fd, &err, trafficClass_));
    if (err == ECONNREFUSED) return retry(s);
    if (err != 0 && err != EINPROGRESS) return systemError("tcp connect to " + address_.toString(), err);
    s.state = State::kConnecting;
  }
  if (s.state == State::kConnecting) {
    pollfd p{s.fd.get(), POLLOUT, 0};
    if (poll(&p, 1, 0) == 0) return Status::ok();
    int err = net::connectResult(s.fd.get());
    if (err == ECONNREFUSED) return retry(s);
    if (err != 0) return systemError("tcp connect to " + address_.toString(), err);
    // The class went on before connect() (net::startConnect), so that the
    // handshake's packets carry it too.
    BRAID_RETURN_IF_ERROR(configureDataSocket(s.fd.get(), -1));
    s.handshake = std::make_unique<net::ConnectorHandshake>(secret_, net::Purpose::kTcpData, connectorId_);
    ConnHeader h;
    h.nSocks = static_cast<uint16_t>(socks_.size());
    h.index = static_cast<uint16_t>(index);
    h.connId = connId_;
    std::memcpy(s.header, &h, sizeof(h));
    s.state = State::kHandshake;
  }
  if (s.state == State::kHandshake) {
    bool finished = false;
    BRAID_RETURN_IF_ERROR(s.handshake->step(s.fd.get(), &finished).prefix("tcp connect to " + address_.toString()));
    if (!finished) return Status::ok();
    s.state = State::kHeader;
  }
  if (s.state == State::kHeader) {
    BRAID_RETURN_IF_ERROR(net::sendSome(s.fd.get(), s.header + s.sent, sizeof(s.header) - s.sent, &s.sent));
    if (s.sent == sizeof(s.header)) s.state = State::kDone;
  }
  return Status::ok();
}

Status PendingConnect::step(bool* finished, std::vector<net::Fd>* socks) {
  *finished = false;
  if (connId_ == 0) BRAID_RETURN_IF_ERROR(net::randomBytes(&connId_, sizeof(connId_)));
  bool all = true;
  for (size_t i = 0; i < socks_.size(); ++i) {
    BRAID_RETURN_IF_ERROR(stepSock(socks_[i], static_cast<int>(i)));
    all &= socks_[i].state == State::kDone;
  }
  if (!all) return Status::ok();
  socks->clear();
  for (Sock& s : socks_) socks->push_back(std::move(s.fd));
  *finished = true;
  return Status::ok();
}

bool PendingConnect::addPollFds(std::vector<pollfd>* fds) const {
  bool readyNow = false;
  for (const Sock& s : socks_) {
    switch (s.state) {
      case State::kIdle: readyNow = true; break;  // a retry is due soon; let the caller come back
      case State::kConnecting: fds->push_back({s.fd.get(), POLLOUT, 0}); break;
      case State::kHandshake:
        fds->push_back({s.fd.get(), static_cast<short>(s.handshake->wantsWrite() ? POLLOUT : POLLIN), 0});
        break;
      case State::kHeader: fds->push_back({s.fd.get(), POLLOUT, 0}); break;
      case State::kDone: break;
    }
  }
  return readyNow;
}

}  // namespace braid::tcp

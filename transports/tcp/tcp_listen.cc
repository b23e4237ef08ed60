#include "transports/tcp/tcp_listen.h"

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "transports/tcp/socket_options.h"

namespace braid::tcp {
namespace {
constexpr int kMaxAcceptsPerCall = 64;  // bounds the work of one accept() under a flood
constexpr size_t kMaxPending = 1024;    // beyond this, the oldest stranger goes first
}  // namespace

TcpListenComm::TcpListenComm(net::Fd fd, const net::SocketAddress& address, const transport::Options& options,
                             std::shared_ptr<PollSet> pollSet)
    : fd_(std::move(fd)),
      address_(address),
      secret_(options.secret),
      handshakeTimeoutMs_(options.handshakeTimeoutMs),
      trafficClass_(options.trafficClass),
      pollSet_(std::move(pollSet)) {
  pollSet_->add(this);
}

TcpListenComm::~TcpListenComm() { pollSet_->remove(this); }

bool TcpListenComm::expired(Clock::time_point start) const {
  return Clock::now() - start > std::chrono::milliseconds(handshakeTimeoutMs_);
}

Status TcpListenComm::acceptNew() {
  for (int i = 0; i < kMaxAcceptsPerCall; ++i) {
    net::Fd conn;
    net::SocketAddress peer;
    BRAID_RETURN_IF_ERROR(net::acceptOne(fd_.get(), &conn, &peer).prefix("tcp listener " + address_.toString()));
    if (!conn.valid()) return Status::ok();
    if (pending_.size() >= kMaxPending) {
      BRAID_WARN("tcp listener %s: too many unauthenticated connections; dropping the one from %s",
                 address_.toString().c_str(), pending_.front().peer.c_str());
      pending_.erase(pending_.begin());
    }
    pending_.push_back(Pending{std::move(conn), peer.toString(), net::AcceptorHandshake(secret_, net::Purpose::kTcpData),
                               false, {}, 0, Clock::now()});
  }
  return Status::ok();
}

bool TcpListenComm::drive(Pending& p) {
  auto drop = [&](const std::string& why) {
    BRAID_WARN("tcp listener %s: dropping connection from %s: %s", address_.toString().c_str(), p.peer.c_str(),
               why.c_str());
    return false;
  };
  if (!p.authenticated) {
    bool finished = false;
    Status st = p.handshake.step(p.fd.get(), &finished);
    if (!st.isOk()) return drop(st.message());
    p.authenticated = finished;
  }
  if (p.authenticated) {
    Status st = net::recvSome(p.fd.get(), p.header + p.have, sizeof(p.header) - p.have, &p.have);
    if (!st.isOk()) return drop(st.message());
    if (p.have == sizeof(p.header)) {
      ConnHeader h;
      std::memcpy(&h, p.header, sizeof(h));
      if (h.magic != kConnMagic || h.nSocks < 1 || h.nSocks > kMaxSocks || h.index >= h.nSocks)
        return drop("malformed connection header after authentication");
      return place(p, h);
    }
  }
  if (expired(p.start))
    return drop("no complete handshake within " + std::to_string(handshakeTimeoutMs_) + " ms");
  return true;
}

bool TcpListenComm::place(Pending& p, const ConnHeader& h) {
  uint64_t connectorId = p.handshake.connectorId();
  auto g = std::find_if(groups_.begin(), groups_.end(), [&](const Group& x) {
    return x.connectorId == connectorId && x.connId == h.connId;
  });
  if (g == groups_.end()) {
    groups_.push_back(Group{connectorId, h.connId, std::vector<net::Fd>(h.nSocks), 0, p.peer, Clock::now()});
    g = groups_.end() - 1;
  }
  if (g->socks.size() != h.nSocks || g->socks[h.index].valid()) {
    BRAID_WARN("tcp listener %s: connection from %s sent an inconsistent socket %u/%u; dropping it",
               address_.toString().c_str(), p.peer.c_str(), h.index, h.nSocks);
    return false;
  }
  Status st = configureDataSocket(p.fd.get(), trafficClass_);
  if (!st.isOk()) BRAID_WARN("tcp listener %s: %s", address_.toString().c_str(), st.message().c_str());
  g->socks[h.index] = std::move(p.fd);
  if (h.index == 0) g->peer = p.peer;
  if (++g->arrived == static_cast<int>(g->socks.size())) {
    ready_.push(std::make_unique<TcpRecvComm>(std::move(g->socks), g->peer, pollSet_), g->connectorId);
    groups_.erase(g);
  }
  return false;
}

void TcpListenComm::dropStale() {
  // A connection whose other sockets never come (the connector died half way).
  for (auto g = groups_.begin(); g != groups_.end();) {
    if (expired(g->start)) {
      BRAID_WARN("tcp listener %s: connection from %s got %d of %zu sockets within %d ms; dropping it",
                 address_.toString().c_str(), g->peer.c_str(), g->arrived, g->socks.size(), handshakeTimeoutMs_);
      g = groups_.erase(g);
    } else {
      ++g;
    }
  }
}

Status TcpListenComm::accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId) {
  recvComm->reset();
  if (ready_.empty()) {
    BRAID_RETURN_IF_ERROR(acceptNew());
    transport::driveEach(pending_, [&](Pending& p) { return drive(p); });
    dropStale();
  }
  ready_.pop(recvComm, connectorId);
  return Status::ok();
}

bool TcpListenComm::addPollFds(std::vector<pollfd>* fds) const {
  fds->push_back({fd_.get(), POLLIN, 0});
  for (const Pending& p : pending_)
    fds->push_back({p.fd.get(), static_cast<short>(!p.authenticated && p.handshake.wantsWrite() ? POLLOUT : POLLIN), 0});
  return !ready_.empty();
}

}  // namespace braid::tcp

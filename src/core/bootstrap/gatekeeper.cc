#include "core/bootstrap/gatekeeper.h"

#include <utility>

#include "base/log.h"

namespace braid::bootstrap {

Gatekeeper::Gatekeeper(const transport::Secret& secret, int handshakeTimeoutMs, std::string who)
    : secret_(secret), handshakeTimeoutMs_(handshakeTimeoutMs), who_(std::move(who)) {}

void Gatekeeper::acceptAll(int listenFd) {
  for (;;) {
    net::Fd conn;
    net::SocketAddress peer;
    Status st = net::acceptOne(listenFd, &conn, &peer);
    if (!st.isOk()) {
      // Out of fds or similar: leave the rest in the backlog for the next round.
      BRAID_WARN("%s: accept failed: %s", who_.c_str(), st.message().c_str());
      return;
    }
    if (!conn.valid()) return;
    if (pending_.size() >= kMaxPending) {
      BRAID_WARN("%s: dropped connection from %s: too many unauthenticated connections",
                 who_.c_str(), peer.toString().c_str());
      continue;
    }
    pending_.push_back(Pending{std::move(conn), peer,
                               net::AcceptorHandshake(secret_, net::Purpose::kBootstrap),
                               Deadline(handshakeTimeoutMs_)});
  }
}

void Gatekeeper::addPollFds(std::vector<pollfd>* fds) {
  polled_ = pending_.size();
  for (const Pending& p : pending_) {
    short events = p.handshake.wantsWrite() ? POLLOUT : POLLIN;
    fds->push_back(pollfd{p.fd.get(), events, 0});
  }
}

void Gatekeeper::drop(Pending& p, const std::string& why) {
  BRAID_WARN("%s: dropped connection from %s that did not prove the communicator's secret: %s",
             who_.c_str(), p.peer.toString().c_str(), why.c_str());
  p.fd.reset();
}

void Gatekeeper::service(const std::vector<pollfd>& fds, size_t first,
                         std::vector<Admitted>* admitted) {
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (i < polled_ && fds[first + i].revents != 0) {
      bool finished = false;
      Status st = p.handshake.step(p.fd.get(), &finished);
      if (!st.isOk()) {
        drop(p, st.message());
      } else if (finished) {
        admitted->push_back(Admitted{std::move(p.fd), p.handshake.connectorId(), p.peer});
      }
    }
    if (p.fd.valid() && p.deadline.expired())
      drop(p, "handshake not finished within " + std::to_string(handshakeTimeoutMs_) + " ms");
  }
  std::erase_if(pending_, [](const Pending& p) { return !p.fd.valid(); });
  polled_ = 0;
}

int Gatekeeper::msUntilNextExpiry(int cap) const {
  int ms = cap;
  for (const Pending& p : pending_) ms = std::min(ms, p.deadline.remainingMs(cap));
  return ms;
}

}  // namespace braid::bootstrap

// Gatekeeper: the accepted connections of a listener that have not yet proved
// the secret. Used by the rendezvous root and by every rank's bootstrap
// listener, so that strangers are handled the same way everywhere.
//
// All handshakes advance together from one poll loop (net::AcceptorHandshake is
// non-blocking), so a stranger that stalls or sends garbage never delays a
// genuine peer; it is dropped, with a BRAID_WARN line, when it fails or when its
// own handshake deadline passes. Not thread-safe: owned by one polling thread.
#pragma once

#include <poll.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "transports/net/auth.h"
#include "transports/net/socket.h"

namespace braid::bootstrap {

// A connection whose peer proved the secret; connectorId is what it said it is
// (a rank), covered by the handshake's MAC.
struct Admitted {
  net::Fd fd;
  uint64_t connectorId = 0;
  net::SocketAddress peer;
};

class Gatekeeper {
 public:
  static constexpr int kDefaultHandshakeTimeoutMs = 5000;
  // More pending strangers than this are closed at once (keeps fds bounded).
  static constexpr size_t kMaxPending = 256;

  // `who` names the listener in log lines ("rendezvous root", "rank 3").
  Gatekeeper(const transport::Secret& secret, int handshakeTimeoutMs, std::string who);

  // Accepts every connection pending on the listener (non-blocking).
  void acceptAll(int listenFd);
  // Appends one pollfd per pending handshake, in order; service() reads them back
  // from fds[first...]. Connections accepted in between have no pollfd yet and
  // are first polled in the next round.
  void addPollFds(std::vector<pollfd>* fds);
  // Advances the handshakes whose fds fired and drops failed or expired ones;
  // moves finished ones to *admitted.
  void service(const std::vector<pollfd>& fds, size_t first, std::vector<Admitted>* admitted);
  // Milliseconds until the earliest handshake deadline (cap when none).
  int msUntilNextExpiry(int cap) const;
  size_t pending() const { return pending_.size(); }
  // Closes every pending connection (the listener is shutting down).
  void clear() {
    pending_.clear();
    polled_ = 0;
  }

 private:
  struct Pending {
    net::Fd fd;
    net::SocketAddress peer;
    net::AcceptorHandshake handshake;
    Deadline deadline;
  };
  void drop(Pending& p, const std::string& why);

  transport::Secret secret_;
  int handshakeTimeoutMs_;
  std::string who_;
  std::vector<Pending> pending_;
  size_t polled_ = 0;  // pending_[0, polled_) have a pollfd in the current round
};

}  // namespace braid::bootstrap

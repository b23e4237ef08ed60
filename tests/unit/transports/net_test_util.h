// Helpers for the socket-level tests: a connected loopback pair.
#pragma once

#include <poll.h>

#include <cstring>

#include "transports/net/socket.h"

namespace braid::net::testing {

// Listens on `host` (port 0), connects to it and accepts: *client and *server
// are the two ends of one TCP connection.
inline Status loopbackPair(const char* host, Fd* client, Fd* server) {
  SocketAddress bind;
  // Built with append: GCC 12 at -O3 warns falsely (-Wrestrict) on "[" + string.
  std::string text = std::strchr(host, ':') ? "[" : "";
  text.append(host).append(std::strchr(host, ':') ? "]:0" : ":0");
  BRAID_RETURN_IF_ERROR(parseAddress(text, &bind));
  Fd listener;
  SocketAddress bound;
  BRAID_RETURN_IF_ERROR(listenOn(bind, 16, &listener, &bound));
  Deadline deadline(5000);
  BRAID_RETURN_IF_ERROR(connectTo(bound, deadline, client));
  while (!server->valid()) {
    pollfd p{listener.get(), POLLIN, 0};
    if (poll(&p, 1, deadline.remainingMs()) == 0 && deadline.expired()) return timeoutError("accept");
    BRAID_RETURN_IF_ERROR(acceptOne(listener.get(), server, nullptr));
  }
  return Status::ok();
}

}  // namespace braid::net::testing

// Sockets inside a fabric host, opened from the root namespace. A socket
// belongs to the network namespace its creator was in when socket(2) ran, and
// setns(2) only moves the calling thread, so fabric briefly enters the host's
// namespace, creates the socket and returns; no other thread is affected.
#pragma once

#include <string>

namespace braid::fabric {

// A TCP socket (type may add SOCK_NONBLOCK) in namespace ns (a name under
// /run/netns), close-on-exec. -1 and *error on failure; the calling thread is
// back in its own namespace either way.
int tcpSocketIn(const std::string& ns, int typeFlags, std::string* error);

// A TCP port that is free right now on addr inside ns (bound with port 0 and
// released). 0 and *error on failure.
int freePortIn(const std::string& ns, const std::string& addr, std::string* error);

}  // namespace braid::fabric
